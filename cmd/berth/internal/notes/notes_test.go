package notes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func connect(t *testing.T, dir string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Server(s, "test")
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	json.Unmarshal(raw, &out)
	if res.IsError {
		return map[string]any{"error": res.Content[0].(*mcp.TextContent).Text}, true
	}
	return out, false
}

// TestNotesAddListSearchAndRead: a note added is listed, found by its
// words, read as its resource (announced by resources/list_changed), and
// still there for a new server on the same folder.
func TestNotesAddListSearchAndRead(t *testing.T) {
	dir := t.TempDir()
	changed := make(chan struct{}, 4)
	cs := connect(t, dir, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} }})
	added, isErr := call(t, cs, "add_note", map[string]any{"title": "Release checklist", "body": "Tag, then build the archives.", "tags": []string{"release"}})
	if isErr || added["id"] != "release-checklist" || added["uri"] != "note://release-checklist" || added["server_pid"] != float64(os.Getpid()) {
		t.Fatalf("add_note: %v", added)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/list_changed after add_note")
	}
	again, _ := call(t, cs, "add_note", map[string]any{"title": "Release checklist", "body": "second"})
	if again["id"] != "release-checklist-2" {
		t.Errorf("a second note of the same title: %v", again)
	}
	list, _ := call(t, cs, "list_notes", nil)
	if notes, _ := list["notes"].([]any); len(notes) != 2 {
		t.Errorf("list_notes: %v", list)
	}
	found, _ := call(t, cs, "search_notes", map[string]any{"query": "ARCHIVES release"})
	if notes, _ := found["notes"].([]any); len(notes) != 1 || notes[0].(map[string]any)["id"] != "release-checklist" {
		t.Errorf("search_notes: %v", found)
	}
	none, _ := call(t, cs, "search_notes", map[string]any{"query": "archives nowhere"})
	if notes, _ := none["notes"].([]any); len(notes) != 0 {
		t.Errorf("search for an absent word: %v", none)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "note://release-checklist"})
	if err != nil || res.Contents[0].Text != "# Release checklist\n\nTag, then build the archives." {
		t.Fatalf("read note://release-checklist: %v %+v", err, res)
	}
	// A new server on the folder lists both as resources.
	cs2 := connect(t, dir, nil)
	rs, err := cs2.ListResources(context.Background(), nil)
	if err != nil || len(rs.Resources) != 2 || rs.Resources[0].MIMEType != "text/markdown" {
		t.Fatalf("resources of a new server: %v %+v", err, rs)
	}
}

// TestNotesRefuseBadInput: each mistake is a tool error naming the fix,
// and stores nothing; files that are not notes are left alone.
func TestNotesRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{not json"), 0o644)
	cs := connect(t, dir, nil)
	for _, tc := range []struct {
		tool, mention string
		args          map[string]any
	}{
		{"add_note", "title is empty", map[string]any{"title": "  ", "body": "x"}},
		{"add_note", "too large", map[string]any{"title": "big", "body": strings.Repeat("x", MaxBody+1)}},
		{"search_notes", "query", map[string]any{"query": " "}},
		{"search_notes", "query", map[string]any{"query": strings.Repeat("q", MaxQuery+1)}},
	} {
		out, isErr := call(t, cs, tc.tool, tc.args)
		if !isErr || !strings.Contains(out["error"].(string), tc.mention) {
			t.Errorf("%s %v: %v", tc.tool, tc.args, out)
		}
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "note://broken"}); err == nil {
		t.Error("read a note that does not exist")
	}
	list, _ := call(t, cs, "list_notes", nil)
	if notes, _ := list["notes"].([]any); len(notes) != 0 {
		t.Errorf("list_notes counts files that are not notes: %v", list)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("refused notes left files: %v", ents)
	}
}
