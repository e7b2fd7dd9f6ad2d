package systest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ideSession is an IDE's session through the real shim that records the
// log notifications it gets at the level it set.
type ideSession struct {
	s    *mcp.ClientSession
	mu   sync.Mutex
	logs []string
}

func openIDE(t *testing.T, ctx context.Context, home, root string, level mcp.LoggingLevel, env ...string) *ideSession {
	t.Helper()
	tr, _ := shimTransport(t, home, root, env...)
	w := &ideSession{}
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if d, ok := r.Params.Data.(map[string]any); ok {
				w.logs = append(w.logs, fmt.Sprintf("%s: %v", r.Params.Level, d["message"]))
			}
		},
	})
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w.s = s
	if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		t.Fatal(err)
	}
	return w
}

// heard reports whether a log notification holding text arrived.
func (w *ideSession) heard(text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.logs {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

// With every port of the range taken, the IDE's window works over stdio
// all the same; the shim, the session, get_server_info and the project's
// record say the port is missing; once a port is free the broker serves
// it and writes the state file.
func TestFullPortRangeLeavesTheIDEWorking(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{Ports: 1, Env: []string{"BERTH_REAP_INTERVAL=200ms"}})
	taken, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", b.Start))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "portless", standards)
	ide := openIDE(t, ctx, b.Home, root, "info")

	if hits := search(t, ctx, ide.s, "closing files"); !hasFile(hits, ".praxis-os/standards/errors.md") {
		t.Fatalf("search over stdio without a port: %+v", hits)
	}
	res, err := ide.s.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_server_info: %v %+v", err, res)
	}
	missing := fmt.Sprint(dig(res.StructuredContent, "missing"))
	if !strings.Contains(missing, "no port") || !strings.Contains(missing, "ports.start") ||
		dig(res.StructuredContent, "capabilities", "http_transport") != false || dig(res.StructuredContent, "server", "url") != nil {
		t.Fatalf("get_server_info without a port: %v", res.StructuredContent)
	}
	brokertest.Eventually(t, "the session is told the port is missing", func() bool { return ide.heard("warning: no port for the project's HTTP endpoint") })
	p, err := b.Client.Project(ctx, api.ProjectID(root))
	if err != nil || p.Port != 0 || p.URL != "" || len(p.Missing) != 1 {
		t.Fatalf("the project's record without a port: %+v %v", p, err)
	}
	if sf, err := api.ReadStateFile(root); err != nil || sf.Transport != api.TransportStdio || sf.Port != nil {
		t.Fatalf("the state file without a port: %+v %v (want stdio, no port)", sf, err)
	}

	// The port frees up: the broker binds it, writes the state file, and
	// says so.
	taken.Close()
	brokertest.Eventually(t, "the state file offers the port", func() bool {
		sf, err := api.ReadStateFile(root)
		return err == nil && sf.Transport == api.TransportDual && sf.Port != nil && *sf.Port == b.Start
	})
	r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", b.Start))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("/health on the port bound late: %d", r.StatusCode)
	}
	brokertest.Eventually(t, "the session is told the endpoint is served", func() bool { return ide.heard("info: the project's HTTP endpoint is served now") })
	if p, err := b.Client.Project(ctx, api.ProjectID(root)); err != nil || p.Port != b.Start || len(p.Missing) != 0 {
		t.Fatalf("the project's record after the port came: %+v %v", p, err)
	}
	if info := getServerInfo(t, ctx, ide.s); info.Project.Root != root {
		t.Fatalf("the IDE's session after the port came: %+v", info)
	}
}

// A state file that cannot be written (its path is a folder) costs the IDE
// nothing; it is named in get_server_info, the session's log and the
// project's record, and written once its place is free.
func TestUnwritableStateFileLeavesTheIDEWorking(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{Env: []string{"BERTH_REAP_INTERVAL=200ms"}})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "stateless", standards)
	blocker := api.StatePath(root)
	if err := os.MkdirAll(filepath.Join(blocker, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	ide := openIDE(t, ctx, b.Home, root, "warning")
	if hits := search(t, ctx, ide.s, "closing files"); !hasFile(hits, ".praxis-os/standards/errors.md") {
		t.Fatalf("search with an unwritable state file: %+v", hits)
	}
	res, err := ide.s.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_server_info: %v %+v", err, res)
	}
	if missing := fmt.Sprint(dig(res.StructuredContent, "missing")); !strings.Contains(missing, "could not be written") || !strings.Contains(missing, blocker) {
		t.Fatalf("get_server_info.missing = %s", missing)
	}
	brokertest.Eventually(t, "the session is told the state file is missing", func() bool { return ide.heard("could not be written") })
	if p, err := b.Client.Project(ctx, api.ProjectID(root)); err != nil || len(p.Missing) != 1 || p.Transport != "" {
		t.Fatalf("the project's record: %+v %v", p, err)
	}

	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, "the state file is written once its place is free", func() bool {
		sf, err := api.ReadStateFile(root)
		return err == nil && sf.Transport == api.TransportDual
	})
	brokertest.Eventually(t, "the record no longer names it", func() bool {
		p, err := b.Client.Project(ctx, api.ProjectID(root))
		return err == nil && len(p.Missing) == 0 && p.Transport == api.TransportDual
	})
}
