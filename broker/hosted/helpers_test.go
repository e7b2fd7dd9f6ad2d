package hosted

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shirou/gopsutil/v4/process"
)

// validServer is a command declaration with defaults filled, as
// config.ValidateServers leaves it.
func validServer(command string, args []string, env map[string]string) config.Server {
	s := map[string]config.Server{"x": {Command: command, Args: args, Env: env}}
	if err := config.ValidateServers(s); err != nil {
		panic(err)
	}
	return s["x"]
}

// testOptions restart fast, so the fault tests stay short.
func testOptions() Options {
	return Options{BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond, StopGrace: time.Second, GuardEvery: 200 * time.Millisecond}
}

func newPool(t testing.TB, opts Options) *Pool {
	t.Helper()
	p := NewPool(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("close pool: %v", err)
		}
	})
	return p
}

// openProject opens a project named id with its own root directory.
func openProject(t testing.TB, pool *Pool, id string, decls ...Decl) *Project {
	t.Helper()
	root := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	hp, err := pool.Open(testCtx(t, 30*time.Second), ProjectSpec{ID: id, Name: id, Root: root}, decls)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		hp.Close(ctx)
	})
	return hp
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// session is a real go-sdk client on an MCP server that has the project's
// hosted surface installed, as a mount's server will.
type session struct {
	*mcp.ClientSession
	srv         *mcp.Server
	toolChanges chan struct{}
}

type sessionOpts struct {
	client  mcp.ClientOptions
	version string // protocol version; "" = the SDK's latest
}

// serve builds an MCP server with one tool of its own and the project's
// hosted surface, as a mount's server will have.
func serve(t testing.TB, hp *Project) *mcp.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "berth-test", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "own"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("own tool"), nil, nil
	})
	srv.AddReceivingMiddleware(hp.Middleware())
	hp.Install(srv)
	t.Cleanup(func() { hp.Uninstall(srv) })
	return srv
}

// connect serves the project on a new MCP server and connects a session.
func connect(t testing.TB, hp *Project, o sessionOpts) *session {
	t.Helper()
	return connectTo(t, serve(t, hp), o)
}

// connectTo connects a new client session to srv over an in-memory pipe.
func connectTo(t testing.TB, srv *mcp.Server, o sessionOpts) *session {
	t.Helper()
	s := &session{srv: srv, toolChanges: make(chan struct{}, 64)}
	opts := o.client
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case s.toolChanges <- struct{}{}:
		default:
		}
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := testCtx(t, 30*time.Second)
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: o.version})
	if err != nil {
		t.Fatal(err)
	}
	s.ClientSession = cs
	t.Cleanup(func() { cs.Close() })
	return s
}

// call calls a tool and returns its text, failing the test on any error.
func (s *session) call(t testing.TB, ctx context.Context, name string, args any) string {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, brokertest.ResultText(res))
	}
	return brokertest.ResultText(res)
}

func toolNames(t testing.TB, ctx context.Context, s *session) []string {
	t.Helper()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// gone reports whether pid has exited and been reaped (a zombie still
// answers signal 0: something has yet to wait for it).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// groupGone reports whether no process is left in process group pgid.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// children lists the pids of this test's child processes whose command line
// holds marker.
func children(t testing.TB, marker string) []int {
	t.Helper()
	procs, err := process.Processes()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range procs {
		if ppid, err := p.Ppid(); err != nil || int(ppid) != os.Getpid() {
			continue
		}
		if cmd, err := p.Cmdline(); err == nil && strings.Contains(cmd, marker) {
			pids = append(pids, int(p.Pid))
		}
	}
	return pids
}

// statusOf returns the project's status of the named server.
func statusOf(t testing.TB, hp *Project, name string) Status {
	t.Helper()
	for _, st := range hp.Status() {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no status for %q in %+v", name, hp.Status())
	return Status{}
}
