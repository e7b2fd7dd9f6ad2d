package systest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/brokertest/ci"
)

// holdLock takes home's broker lock as a broker that does not answer
// would: a CLI that needs the broker waits for it. release lets go.
func holdLock(t *testing.T, home string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, api.LockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	var once sync.Once
	release = func() { once.Do(func() { f.Close() }) }
	t.Cleanup(release)
	return release
}

// TestCLIShowsProgressOnATerminalOnly: `berth search` waiting over a
// second for the broker says so on a terminal, erases the line when the
// answer comes, and prints nothing of the kind when its output is piped.
func TestCLIShowsProgressOnATerminalOnly(t *testing.T) {
	t.Parallel()
	script, err := exec.LookPath("script")
	if err != nil {
		ci.Unavailable(t, "script (util-linux) is missing: it gives the CLI a terminal (apt-get install bsdutils)")
	}
	home := brokertest.Home(t)
	failOnBrokersLeft(t, home)
	root := brokertest.Project(t, "waits", map[string]string{".praxis-os/standards/money.md": "# Money\n\n## Rounding\n\nRound half to even.\n"})
	start, end := brokertest.PortRange(t, 5)
	env := append(os.Environ(), "BERTH_HOME="+home, "BERTH_LISTEN=", "TERM=xterm",
		fmt.Sprintf("BERTH_PORTS_START=%d", start), fmt.Sprintf("BERTH_PORTS_END=%d", end))

	// run starts `berth search` (through script for a terminal) while a
	// silent process holds the broker's lock; once it has waited, a real
	// broker takes over and the search completes.
	run := func(tty bool) (string, *brokertest.Broker) {
		t.Helper()
		release := holdLock(t, home)
		search := []string{brokertest.Berth(t), "search", "--project", root, "rounding"}
		cmd := exec.Command(search[0], search[1:]...)
		if tty {
			cmd = exec.Command(script, "-qefc", strings.Join(search, " "), "/dev/null")
		}
		cmd.Env = env
		var out brokertest.SyncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { brokertest.KillPID(cmd.Process.Pid) })
		if tty {
			brokertest.Eventually(t, "the progress line on the terminal", func() bool { return strings.Contains(out.String(), "connecting to the broker… ") })
		} else {
			time.Sleep(2 * time.Second) // twice cmd/berth's progressDelay (1 s), after which a terminal shows the line: none must come
		}
		release()
		b := brokertest.StartBroker(t, brokertest.Options{Home: home})
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("berth search exited %d:\n%q", ee.ExitCode(), out.String())
			}
			t.Fatal(err)
		}
		return out.String(), b
	}

	piped, b := run(false)
	if strings.Contains(piped, "\r") || strings.Contains(piped, "connecting") || !strings.HasPrefix(piped, "1. .praxis-os/standards/money.md:3-5  Money > Rounding") {
		t.Fatalf("piped output:\n%q", piped)
	}
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}

	onTTY, _ := run(true)
	// The line is drawn, then blanked with spaces and a carriage return
	// before the results; script turns \n into \r\n.
	results := strings.LastIndex(onTTY, "\r1. .praxis-os/standards/money.md:3-5  Money > Rounding")
	if !strings.Contains(onTTY, "\rconnecting to the broker… ") || results < 0 ||
		!strings.HasSuffix(strings.TrimRight(onTTY[:results], " "), "\r") {
		t.Fatalf("terminal output:\n%q", onTTY)
	}
}
