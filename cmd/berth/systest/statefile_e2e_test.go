package systest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// window is a berth-shim process of one IDE window: it holds the project
// from its start until its stdin closes.
type window struct {
	t         *testing.T
	transport string
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	stderr    *brokertest.SyncBuffer
}

func openWindow(t *testing.T, b *brokertest.Broker, root, transport string) *window {
	t.Helper()
	cmd := exec.Command(brokertest.Shim(t), "--project", root, "--transport", transport, "--log-level", "debug")
	brokertest.DieWithTest(cmd)
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home, "BERTH_LISTEN=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &window{t: t, transport: transport, cmd: cmd, stdin: stdin, stderr: &brokertest.SyncBuffer{}}
	cmd.Stdout = io.Discard
	cmd.Stderr = io.MultiWriter(w.stderr, newLogWriter(t, "shim "+transport))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return w
}

// close ends the window as an IDE does: stdin closes, the shim detaches and exits.
func (w *window) close() {
	w.t.Helper()
	w.stdin.Close()
	if err := brokertest.WaitExit(w.cmd, 10*time.Second); err != nil {
		w.t.Fatalf("%s window after stdin closed: %v\n%s", w.transport, err, w.stderr.String())
	}
}

// wantState waits (bounded) until the project has holders holders and its
// state file says transport, with the port and url for dual and http and
// null ones for stdio; transport "" wants no state file at all.
func wantState(t *testing.T, b *brokertest.Broker, root string, holders int, transport string) {
	t.Helper()
	ctx := testCtx(t, 20*time.Second)
	id := api.ProjectID(root)
	var (
		p      api.Project
		perr   error
		sf     api.StateFile
		sferr  error
		reason string
	)
	ok := brokertest.Poll(15*time.Second, func() bool {
		sf, sferr = api.ReadStateFile(root)
		if transport == "" {
			_, statErr := os.Stat(api.StatePath(root))
			reason = fmt.Sprintf("state file still there: %+v %v", sf, sferr)
			return os.IsNotExist(statErr)
		}
		if p, perr = b.Client.Project(ctx, id); perr != nil || p.Holders != holders {
			reason = fmt.Sprintf("project %+v %v, want %d holders", p, perr, holders)
			return false
		}
		reason = fmt.Sprintf("state file %+v %v", sf, sferr)
		if sferr != nil || sf.Transport != transport || sf.PID != b.PID() || p.Transport != transport {
			return false
		}
		if transport == api.TransportStdio {
			return sf.Port == nil && sf.URL == nil
		}
		return sf.Port != nil && *sf.Port == p.Port && sf.URL != nil && *sf.URL == p.URL
	})
	if !ok {
		t.Fatalf("want %d holders and a state file saying %q: %s", holders, transport, reason)
	}
}

// TestStateFileFollowsEveryHolder opens and closes windows of mixed
// transports and a pin in two orders: after each step the broker's state
// file offers the HTTP endpoint whenever anyone asked for it, and says
// stdio (port and url null) only when the stdio windows are alone.
func TestStateFileFollowsEveryHolder(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 120*time.Second)
	pin := func(root string) { b.Attach(t, root) }
	unpin := func(root string) {
		t.Helper()
		if err := b.Client.Detach(ctx, api.ProjectID(root), ""); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("dual first", func(t *testing.T) {
		root := brokertest.Project(t, "order-a", nil)
		dual := openWindow(t, b, root, api.TransportDual)
		wantState(t, b, root, 1, api.TransportDual)
		stdio := openWindow(t, b, root, api.TransportStdio)
		wantState(t, b, root, 2, api.TransportDual) // a stdio window hides nothing
		dual.close()
		wantState(t, b, root, 1, api.TransportStdio)
		pin(root)
		wantState(t, b, root, 2, api.TransportHTTP)
		stdio.close()
		wantState(t, b, root, 1, api.TransportHTTP)
		http := openWindow(t, b, root, api.TransportHTTP)
		wantState(t, b, root, 2, api.TransportHTTP)
		dual2 := openWindow(t, b, root, api.TransportDual)
		wantState(t, b, root, 3, api.TransportDual)
		unpin(root)
		wantState(t, b, root, 2, api.TransportDual)
		dual2.close()
		wantState(t, b, root, 1, api.TransportHTTP)
		http.close()
		wantState(t, b, root, 0, "") // unmounted after mount_grace: the file goes with it
	})

	t.Run("stdio first", func(t *testing.T) {
		root := brokertest.Project(t, "order-b", nil)
		stdio := openWindow(t, b, root, api.TransportStdio)
		wantState(t, b, root, 1, api.TransportStdio)
		http := openWindow(t, b, root, api.TransportHTTP)
		wantState(t, b, root, 2, api.TransportHTTP)
		stdio.close()
		wantState(t, b, root, 1, api.TransportHTTP)
		dual := openWindow(t, b, root, api.TransportDual)
		wantState(t, b, root, 2, api.TransportDual)
		http.close()
		wantState(t, b, root, 1, api.TransportDual)
		pin(root)
		wantState(t, b, root, 2, api.TransportDual)
		stdio2 := openWindow(t, b, root, api.TransportStdio)
		wantState(t, b, root, 3, api.TransportDual)
		dual.close()
		wantState(t, b, root, 2, api.TransportHTTP)
		unpin(root)
		wantState(t, b, root, 1, api.TransportStdio)
		stdio2.close()
		wantState(t, b, root, 0, "")
	})
}

// TestStateFileThatCannotBeWrittenFailsNoAttach makes the state file's path
// a directory: a pin and a window still attach, the attach answer and the
// window's log say what is missing, the broker logs it, and the IDE's
// tools work.
func TestStateFileThatCannotBeWrittenFailsNoAttach(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "unwritable", nil)
	if err := os.Mkdir(api.StatePath(root), 0o755); err != nil {
		t.Fatal(err)
	}
	resp, err := b.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		t.Fatalf("a pin failed with an unwritable state file: %v", err)
	}
	if len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], api.StatePath(root)) || resp.Transport != "" {
		t.Errorf("attach answer: warnings %q, transport %q; want one warning naming %s and no transport", resp.Warnings, resp.Transport, api.StatePath(root))
	}

	stderr := &brokertest.SyncBuffer{}
	cmd := exec.Command(brokertest.Shim(t), "--project", root, "--log-level", "debug")
	brokertest.DieWithTest(cmd)
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home, "BERTH_LISTEN=")
	cmd.Stderr = io.MultiWriter(stderr, newLogWriter(t, "shim"))
	ide := connectMCP(t, ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second})
	if info := getServerInfo(t, ctx, ide); info.Project.Root != root || info.Server.Transport != "stdio" {
		t.Fatalf("the IDE's tools with an unwritable state file: %+v", info)
	}
	if !strings.Contains(stderr.String(), "could not be written") {
		t.Errorf("the window's log does not say the state file is missing:\n%s", stderr.String())
	}
	if !strings.Contains(b.Stderr(), "state file not written") {
		t.Errorf("the broker's log does not say the state file is missing")
	}
	if fi, err := os.Stat(api.StatePath(root)); err != nil || !fi.IsDir() {
		t.Errorf("the directory in the state file's place was touched: %v", err)
	}
}
