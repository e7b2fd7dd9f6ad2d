package finder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/finder/findertest"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	findertest.ServeIfAsked()
	os.Exit(m.Run())
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// validServer is a declaration with defaults filled, as
// config.ValidateServers leaves it.
func validServer(command string, args []string, env map[string]string) config.Server {
	s := map[string]config.Server{"x": {Command: command, Args: args, Env: env}}
	if err := config.ValidateServers(s); err != nil {
		panic(err)
	}
	return s["x"]
}

// realDecls declares the servers of the finder's figures: the npm
// server-everything, server-memory and server-filesystem (allowed dir),
// and the fixture server of 100 tools.
func realDecls(t testing.TB, dir string) []hosted.Decl {
	t.Helper()
	node, everything := brokertest.NPMServer(t, "server-everything")
	_, memory := brokertest.NPMServer(t, "server-memory")
	_, fs := brokertest.NPMServer(t, "server-filesystem")
	ws, env := findertest.Command(t)
	decls := []hosted.Decl{
		{Name: "everything", Origin: hosted.OriginUser, Server: validServer(node, []string{everything, "stdio"}, nil)},
		{Name: "filesystem", Origin: hosted.OriginUser, Server: validServer(node, []string{fs, dir}, nil)},
		{Name: "memory", Origin: hosted.OriginUser, Server: validServer(node, []string{memory},
			map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")})},
		{Name: "workspace", Origin: hosted.OriginUser, Server: validServer(ws, nil, env)},
	}
	for i := range decls {
		decls[i] = eager(decls[i])
	}
	return decls
}

// eager is d started at once, so that waitRunning can wait for it (a
// lazy server starts on a session's first listing, which waits for it a
// bounded time only).
func eager(d hosted.Decl) hosted.Decl {
	d.Server.Start = config.StartEager
	return d
}

// fixture is a project engine with hosted servers and the finder
// installed on its MCP server, as a mount has them.
type fixture struct {
	eng    *project.Engine
	hp     *hosted.Project
	finder *Finder
	root   string
	db     *store.DB
}

// fixtureOpts vary a fixture.
type fixtureOpts struct {
	config    string    // the project's config.yaml; "" = none
	db        *store.DB // nil: a new one
	approvals hosted.ApprovalChecker
}

// openFixture opens a project (tool groups rag and workflow, the log ring
// on) hosting decls.
func openFixture(t testing.TB, decls []hosted.Decl) *fixture {
	return openFixtureWith(t, decls, fixtureOpts{})
}

func openFixtureWith(t testing.TB, decls []hosted.Decl, o fixtureOpts) *fixture {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	root := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(root, ".praxis-os", "standards"), 0o755); err != nil {
		t.Fatal(err)
	}
	if o.config != "" {
		if err := os.WriteFile(filepath.Join(root, ".praxis-os", "config.yaml"), []byte(o.config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := o.db
	if db == nil {
		var err error
		db, err = store.Open(filepath.Join(t.TempDir(), "berth.db"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	eng, err := project.Open(ctx, project.Options{Root: root, ID: "proj", DB: db, Logs: logring.New(logring.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	pool := hosted.NewPool(hosted.Options{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		pool.Close(ctx)
	})
	hp, err := pool.Open(ctx, hosted.ProjectSpec{ID: "proj", Name: "proj", Root: root, Approvals: o.approvals}, decls)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		hp.Close(ctx)
	})
	eng.Server().AddReceivingMiddleware(hp.Middleware())
	hp.Install(eng.Server())
	f := New(Options{Tools: eng.Tools, Config: eng.Config, Servers: hp.Status, Cache: NewCache(db, "proj")})
	t.Cleanup(f.Close)
	hp.OnChange(f.Changed)
	eng.Server().AddReceivingMiddleware(f.Middleware)
	eng.Server().AddSendingMiddleware(f.Sending)
	return &fixture{eng: eng, hp: hp, finder: f, root: root, db: db}
}

// waitRunning waits until every declared server answers, its tools are
// served and the finder ranks them, so that a listing holds every
// server's tools.
func (f *fixture) waitRunning(t testing.TB, ctx context.Context) {
	t.Helper()
	for {
		var waiting []string
		for _, st := range f.hp.Status() {
			if st.State != api.ServerRunning || st.Tools == 0 {
				waiting = append(waiting, fmt.Sprintf("%s (%s %s)", st.Name, st.State, st.LastError))
			}
		}
		if len(waiting) == 0 {
			// The finder hears of the servers just after they serve
			// (OnChange): wait until it ranks their tools.
			if v := f.finder.mustView(t); len(v.servers) == 0 {
				return
			}
			waiting = append(waiting, "the finder's view")
		}
		select {
		case <-ctx.Done():
			t.Fatalf("servers not running: %v", waiting)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connect opens an in-memory client session on the fixture's server, on
// MCP 2025-11-25 (where a server may tell a session its tools changed).
func (f *fixture) connect(t testing.TB, name string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	_, cs := connectTo(t, f.eng.Server(), name, opts)
	return cs
}

// connectTo connects a client called name to srv over an in-memory pipe.
func connectTo(t testing.TB, srv *mcp.Server, name string, opts *mcp.ClientOptions) (*mcp.ServerSession, *mcp.ClientSession) {
	t.Helper()
	ctx := testCtx(t, time.Minute)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ss, cs
}

// listTools lists every tool of the session.
func listTools(t testing.TB, ctx context.Context, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tool)
	}
	return out
}

// catalogOf makes a catalog of listed tools; a name with __ comes from
// that server.
func catalogOf(t testing.TB, tools []*mcp.Tool) *Catalog {
	t.Helper()
	var entries []*Tool
	for _, tool := range tools {
		server, _, _ := strings.Cut(tool.Name, Sep)
		if server == tool.Name {
			server = ""
		}
		e, err := NewTool(tool, server)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	return NewCatalog(entries)
}
