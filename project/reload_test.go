package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/search"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listener is a client that records what the server tells it.
type listener struct {
	cs      *mcp.ClientSession
	changed chan struct{} // one per notifications/tools/list_changed
	mu      sync.Mutex
	logs    []*mcp.LoggingMessageParams
}

func listen(t *testing.T, e *Engine, level mcp.LoggingLevel) *listener {
	t.Helper()
	l := &listener{changed: make(chan struct{}, 16)}
	l.cs = connectWith(t, e, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { l.changed <- struct{}{} },
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			l.mu.Lock()
			l.logs = append(l.logs, r.Params)
			l.mu.Unlock()
		},
	})
	if level != "" {
		if err := l.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// message returns the first log notification whose message holds text.
func (l *listener) message(text string) *mcp.LoggingMessageParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.logs {
		if d, ok := m.Data.(map[string]any); ok && strings.Contains(fmt.Sprint(d["message"]), text) {
			return m
		}
	}
	return nil
}

func (l *listener) waitMessage(t *testing.T, text string) *mcp.LoggingMessageParams {
	t.Helper()
	var m *mcp.LoggingMessageParams
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { m = l.message(text); return m != nil }) {
		t.Fatalf("no log notification holding %q; got %d others", text, len(l.logs))
	}
	return m
}

func (l *listener) waitChanged(t *testing.T) {
	t.Helper()
	select {
	case <-l.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

func (l *listener) tools(t *testing.T) []string {
	t.Helper()
	res, err := l.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func writeConfig(t *testing.T, root, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, ".praxis-os", "config.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An edit of enabled_tool_groups changes the tools at once: every session
// hears tools/list_changed and lists the new set; the parts follow.
func TestConfigEditChangesTheTools(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os", "standards"), 0o755)
	os.WriteFile(filepath.Join(root, ".praxis-os", "standards", "a.md"), []byte("# Zeppelin mooring\n\nRopes.\n"), 0o644)
	writeConfig(t, root, "mcp:\n  enabled_tool_groups: [rag, workflow]\n")
	e := openEngine(t, root)
	a, b := listen(t, e, ""), listen(t, e, "")
	if got := a.tools(t); !slices.Contains(got, "search_standards") || !slices.Contains(got, "start_workflow") || slices.Contains(got, "pos_workflow") {
		t.Fatalf("tools at open: %v", got)
	}

	writeConfig(t, root, "mcp:\n  enabled_tool_groups: [pos]\n")
	a.waitChanged(t)
	b.waitChanged(t)
	got := b.tools(t)
	if slices.Contains(got, "search_standards") || slices.Contains(got, "start_workflow") || !slices.Contains(got, "pos_workflow") || !slices.Contains(got, "get_server_info") {
		t.Fatalf("tools after [pos]: %v", got)
	}
	if !slices.Equal(got, e.ToolNames()) {
		t.Fatalf("the engine lists %v, the server %v", e.ToolNames(), got)
	}
	if _, err := e.Search(context.Background(), search.Query{Text: "zeppelin", N: 1}); !errors.Is(err, ErrSearchOff) {
		t.Fatalf("search with rag off: %v", err)
	}
	if info := callInfo(t, e); info.Capabilities.RAGEnabled || !info.Capabilities.WorkflowEnabled || info.Capabilities.ToolsAvailable != len(got) {
		t.Fatalf("get_server_info after [pos]: %+v", info.Capabilities)
	}

	writeConfig(t, root, "mcp:\n  enabled_tool_groups: [rag]\n")
	a.waitChanged(t)
	if got := a.tools(t); !slices.Contains(got, "search_standards") || slices.Contains(got, "pos_workflow") {
		t.Fatalf("tools after [rag]: %v", got)
	}
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_standards", Arguments: map[string]any{"query": "zeppelin mooring"}})
	if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "a.md") {
		t.Fatalf("search after rag came back: %v %+v", err, res)
	}
}

// A config that does not load keeps the settings in force and says why,
// to the sessions, in the status; a good edit after clears it.
func TestBadConfigEditKeepsTheOldConfig(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	writeConfig(t, root, "mcp:\n  enabled_tool_groups: [rag]\n")
	e := openEngine(t, root)
	l := listen(t, e, "warning")
	before := l.tools(t)

	writeConfig(t, root, "mcp:\n  enabled_tool_groups: [rag\n")
	m := l.waitMessage(t, "project config edit not applied")
	if m.Level != "warning" || m.Logger != "berth" {
		t.Fatalf("the refusal arrived as %+v", m)
	}
	if got := l.tools(t); !slices.Equal(got, before) {
		t.Fatalf("a bad edit changed the tools: %v -> %v", before, got)
	}
	if msg, _ := e.Status()["config_error"].(string); !strings.Contains(msg, "config.yaml") {
		t.Fatalf("status config_error = %q", msg)
	}

	writeConfig(t, root, "mcp:\n  enabled_tool_groups: [rag, pos]\n")
	l.waitChanged(t)
	if _, ok := e.Status()["config_error"]; ok {
		t.Fatal("config_error stays after a good edit")
	}
	if !slices.Contains(l.tools(t), "pos_workflow") {
		t.Fatal("the good edit was not applied")
	}
}

// Each session gets the records at or above the level it set, and none
// before it sets one.
func TestLogNotificationsFollowEachSessionsLevel(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755)
	e := openEngine(t, root)
	debug, warn, none := listen(t, e, "debug"), listen(t, e, "warning"), listen(t, e, "")

	e.log.Debug("a debug record about the project", "detail", 7)
	e.log.Info("an info record")
	e.log.Warn("a warning record", "err", errors.New("boom"))

	m := debug.waitMessage(t, "a debug record")
	if d := m.Data.(map[string]any); m.Level != "debug" || d["detail"] != float64(7) {
		t.Fatalf("debug record = %+v", m)
	}
	debug.waitMessage(t, "an info record")
	if d := debug.waitMessage(t, "a warning record").Data.(map[string]any); d["err"] != "boom" {
		t.Fatalf("warning record data = %v", d)
	}
	warn.waitMessage(t, "a warning record")
	if warn.message("an info record") != nil || warn.message("a debug record") != nil {
		t.Fatal("a session at warning got records below it")
	}
	if err := none.cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(none.logs) != 0 {
		t.Fatalf("a session that set no level got %d records", len(none.logs))
	}
}
