package hosted

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// TestRestartReturnsServing: Restart of a running server that takes most
// of a second to start returns once the new process serves, so that a call
// made right after reaches it; a restart of a failed server that fails
// again says so, with its last stderr line; an unknown name is refused.
func TestRestartReturnsServing(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	slow := countedDecl(t, "slow", filepath.Join(t.TempDir(), "count"), 800*time.Millisecond, "server", exe)
	crash := Decl{Name: "crash", Origin: OriginUser, Server: validServer("sh", []string{"-c", "echo boom >&2; exit 1"}, nil)}
	crash.Server.Start = "eager"
	hp := openProject(t, newPool(t, testOptions()), "p1", slow, crash)
	s := connect(t, hp, sessionOpts{})
	before := s.call(t, ctx, "slow__pid", nil)

	restarted, err := hp.Restart(ctx, "slow")
	if !restarted || err != nil {
		t.Fatalf("Restart(slow) = %v, %v; want a restart that serves", restarted, err)
	}
	if after := s.call(t, ctx, "slow__pid", nil); after == before {
		t.Errorf("the call right after the restart reached the old process %s", before)
	}
	if st := statusOf(t, hp, "slow"); st.State != StateRunning || st.Restarts != 1 {
		t.Errorf("after the restart: %+v", st)
	}

	if !brokertest.Poll(30*time.Second, func() bool { return statusOf(t, hp, "crash").State == StateFailed }) {
		t.Fatalf("crash never failed: %+v", statusOf(t, hp, "crash"))
	}
	restarted, err = hp.Restart(ctx, "crash")
	if !restarted || err == nil || !strings.Contains(err.Error(), "failed to start again") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Restart(crash) = %v, %v; want a restart that reports the failure and its stderr", restarted, err)
	}
	if _, err := hp.Restart(ctx, "nope"); !errors.Is(err, ErrNoSuchServer) {
		t.Errorf("Restart(nope) = %v; want ErrNoSuchServer", err)
	}
}
