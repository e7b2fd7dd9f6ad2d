package mounttable

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// TestCloseStepsNameTheStepThatHoldsAShutdownUp: a step that blocks is
// named in the log each slowClose while it blocks, and its time is
// logged when it ends; quick steps and a quick shutdown log nothing.
func TestCloseStepsNameTheStepThatHoldsAShutdownUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out brokertest.SyncBuffer
		log := slog.New(slog.NewTextHandler(&out, nil))

		quick := startClose(log)
		quick.run("a quick step", func() {})
		quick.done()
		time.Sleep(3 * slowClose)
		if got := out.String(); got != "" {
			t.Fatalf("a quick shutdown logged:\n%s", got)
		}

		slow := startClose(log)
		slow.run("a quick step", func() {})
		slow.run("the stuck step", func() { time.Sleep(2*slowClose + slowClose/2) })
		slow.run("the last step", func() {})
		slow.done()
		time.Sleep(3 * slowClose)
		got := out.String()
		if n := strings.Count(got, `msg="closing the project is slow" waiting_for="the stuck step"`); n != 2 {
			t.Errorf("the stuck step was named %d times while it blocked, want 2 (at 5 s and 10 s):\n%s", n, got)
		}
		if !strings.Contains(got, `msg="a step of closing the project was slow" step="the stuck step" took=12.5s`) {
			t.Errorf("the stuck step's time is not logged:\n%s", got)
		}
		if strings.Contains(got, "a quick step") || strings.Contains(got, "the last step") {
			t.Errorf("a quick step was logged:\n%s", got)
		}
	})
}
