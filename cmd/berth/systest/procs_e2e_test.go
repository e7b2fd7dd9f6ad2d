package systest

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// The broker runs on one processor while it serves one call at a time, and
// on every processor the runtime gave it while two calls are in flight
// (project/procs); its go_sched_gomaxprocs_threads gauge says which. One
// held call lets it narrow; a second on another session widens it before
// the second one runs; once they return it narrows again.
func TestBrokerWidensForTwoCallsAndNarrowsWhenCalm(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	hold := t.TempDir()
	// GOMAXPROCS unset (empty is unset): the broker's own choice is tested.
	b := brokertest.StartBroker(t, brokertest.Options{Env: []string{brokertest.HoldEnv + "=" + hold, "GOMAXPROCS="}})
	p := b.Attach(t, brokertest.Project(t, "governed", standards))
	all := runtime.GOMAXPROCS(0) // the test's runtime reads the same machine as the broker's
	calm := 1
	if all < 2 {
		calm = all // one processor: nothing to govern
	}
	procs := func() float64 {
		v, ok := metricValue(scrape(t, ctx, b), "go_sched_gomaxprocs_threads", nil)
		if !ok {
			t.Fatal("the broker's metrics have no go_sched_gomaxprocs_threads")
		}
		return v
	}
	brokertest.Eventually(t, fmt.Sprintf("the calm broker on %d processor", calm), func() bool { return procs() == float64(calm) })

	first, second := initializeAt(t, ctx, p.URL, "2025-06-18"), initializeAt(t, ctx, p.URL, "2025-06-18")
	release1, done1 := holdCall(t, ctx, p.URL, first, hold, "first")
	brokertest.Eventually(t, "the first held call runs", func() bool { return exists(filepath.Join(hold, "first.started")) })
	// What ran just before (the sessions' initialize and notifications, the
	// mount's own work) may have run two at once and widened it, and under
	// load a calm check comes late: one call in flight lets it narrow.
	brokertest.Eventually(t, fmt.Sprintf("one call in flight, the broker on %d processor", calm), func() bool { return procs() == float64(calm) })
	release2, done2 := holdCall(t, ctx, p.URL, second, hold, "second")
	brokertest.Eventually(t, "the second held call runs", func() bool { return exists(filepath.Join(hold, "second.started")) })
	if got := procs(); got != float64(all) {
		t.Fatalf("two calls in flight: the broker on %v processors, want every one (%d)", got, all)
	}
	release1()
	release2()
	for i, done := range []<-chan *rpcMessage{done1, done2} {
		select {
		case msg := <-done:
			if msg == nil || msg.Error != nil {
				t.Fatalf("held call %d: %+v", i+1, msg)
			}
		case <-ctx.Done():
			t.Fatalf("held call %d never returned", i+1)
		}
	}
	brokertest.Eventually(t, "the broker back on one processor once calm", func() bool { return procs() == float64(calm) })
}
