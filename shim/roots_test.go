package shim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ide is the IDE's side of the shim's stdio: what it sends and what the
// shim wrote back, one message a line.
type ide struct {
	lines chan []byte
	mu    sync.Mutex
	out   bytes.Buffer
}

func newIDE() *ide { return &ide{lines: make(chan []byte, 16)} }

func (i *ide) Write(p []byte) (int, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.out.Write(p)
}

func (i *ide) send(s string) { i.lines <- []byte(s) }

// received returns the messages the shim wrote, decoded.
func (i *ide) received(t *testing.T) []map[string]any {
	t.Helper()
	i.mu.Lock()
	defer i.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(i.out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("the shim wrote a line that is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// waitFor waits until the shim has written n messages.
func (i *ide) waitFor(t *testing.T, n int) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if got := i.received(t); len(got) >= n {
			return got
		}
	}
	t.Fatalf("the shim wrote %d messages, want %d", len(i.received(t)), n)
	return nil
}

const initWithRoots = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"ide","version":"1"}}}`

func TestRootsProjectAnswersInitializeAndAsksForRoots(t *testing.T) {
	project := mkProject(t)
	other := t.TempDir()
	i := newIDE()
	type result struct {
		root Place
		hs   handshake
		err  error
	}
	done := make(chan result, 1)
	go func() {
		root, hs, err := rootsProject(context.Background(), i.lines, i, errNoProject)
		done <- result{root, hs, err}
	}()
	i.send(`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}`)
	got := i.waitFor(t, 1)
	if e, _ := got[0]["error"].(map[string]any); got[0]["id"] != float64(0) || e["code"] != float64(codeMethodNotFound) {
		t.Fatalf("the shim's answer to server/discover: %v", got[0])
	}
	i.send(initWithRoots)
	got = i.waitFor(t, 2)
	res, _ := got[1]["result"].(map[string]any)
	if got[1]["id"] != float64(1) || res["protocolVersion"] != "2025-06-18" || res["capabilities"] == nil {
		t.Fatalf("the shim's answer to initialize: %v", got[1])
	}
	i.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	i.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`) // early: it waits
	got = i.waitFor(t, 3)
	if got[2]["method"] != "roots/list" || got[2]["id"] != "berth-shim-roots" {
		t.Fatalf("the shim's request after initialized: %v", got[2])
	}
	i.send(`{"jsonrpc":"2.0","id":"berth-shim-roots","result":{"roots":[{"uri":"file://` + other + `"},{"uri":"https://example.invalid/x"},{"uri":"file://` + project + `","name":"p"}]}}`)
	r := <-done
	if r.err != nil || r.root != (Place{Root: project}) {
		t.Fatalf("rootsProject = %+v, %v; want %s", r.root, r.err, project)
	}
	if !strings.Contains(string(r.hs.initialize), `"initialize"`) || !strings.Contains(string(r.hs.initialized), "notifications/initialized") ||
		len(r.hs.queued) != 1 || !strings.Contains(string(r.hs.queued[0]), "tools/list") {
		t.Fatalf("handshake = %s / %s / %q", r.hs.initialize, r.hs.initialized, r.hs.queued)
	}
}

func TestRootsProjectFailuresNameTheFix(t *testing.T) {
	for _, tc := range []struct {
		name    string
		send    []string
		mention string
		queued  int
		noRoots bool // the IDE named no workspace folder: the working directory may be served
	}{
		{"no roots capability", []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`}, "shares no workspace folders", 1, true},
		{"not an initialize first", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}, "--project DIR", 1, true},
		{"no root exists", []string{initWithRoots, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"berth-shim-roots","result":{"roots":[{"uri":"file:///nonexistent-berth"}]}}`}, "none of the IDE's workspace folders (/nonexistent-berth)", 0, false},
		{"the only root is the filesystem's root", []string{initWithRoots, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"berth-shim-roots","result":{"roots":[{"uri":"file:///"}]}}`}, "the filesystem's root", 0, false},
		{"no root at all", []string{initWithRoots, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"berth-shim-roots","result":{"roots":[]}}`}, "no workspace folder open", 0, true},
		{"roots/list refused", []string{initWithRoots, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"berth-shim-roots","error":{"code":-32601,"message":"no roots here"}}`}, "refused roots/list (no roots here)", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := newIDE()
			for _, s := range tc.send {
				i.send(s)
			}
			_, hs, err := rootsProject(context.Background(), i.lines, i, errNoProject)
			if err == nil || !errors.Is(err, errNoProject) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("err = %v, want one naming %q", err, tc.mention)
			}
			if len(hs.queued) != tc.queued {
				t.Fatalf("%d lines left for the refusal, want %d", len(hs.queued), tc.queued)
			}
			if nr := (noRoots{}); errors.As(err, &nr) != tc.noRoots {
				t.Fatalf("err %v: noRoots %v, want %v", err, !tc.noRoots, tc.noRoots)
			}
		})
	}
}

// A shim that cannot serve answers every request with the reason, the
// queued ones first, and drops notifications.
func TestRefuseAnswersEveryRequest(t *testing.T) {
	i := newIDE()
	i.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	i.send(`{"jsonrpc":"2.0","id":"b","method":"tools/list"}`)
	close(i.lines)
	refuse(context.Background(), i.lines, [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)}, i, errors.New("no project found: pass --project DIR"))
	got := i.received(t)
	if len(got) != 2 || got[0]["id"] != float64(1) || got[1]["id"] != "b" {
		t.Fatalf("answers: %v", got)
	}
	for _, m := range got {
		e, _ := m["error"].(map[string]any)
		if e["code"] != float64(codeCannotServe) || !strings.Contains(e["message"].(string), "cannot serve this project: no project found: pass --project DIR") {
			t.Fatalf("answer %v", m)
		}
	}
}

// Refuse returns shortly after its last answer even while stdin stays open.
func TestRefuseEndsAfterItsAnswers(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	i := newIDE()
	done := make(chan struct{})
	go func() { Refuse(context.Background(), r, i, errors.New("bad flag")); close(done) }()
	io.WriteString(w, `{"jsonrpc":"2.0","id":7,"method":"initialize"}`+"\n")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Refuse did not return with stdin open")
	}
	if got := i.received(t); len(got) != 1 || got[0]["id"] != float64(7) {
		t.Fatalf("answers: %v", got)
	}
}

// The versions the shim answers initialize with are ones the broker's SDK
// answers with too, the newest first.
func TestShimProtocolVersionsAreTheSDKs(t *testing.T) {
	var sdk []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" { // initialize ends with that version
			sdk = append(sdk, v)
		}
	}
	if !slices.Equal(protocolVersions, sdk) {
		t.Fatalf("shim versions %v, the SDK answers initialize with %v", protocolVersions, sdk)
	}
}

// Roots in no project: the first one Berth serves as a folder; the home
// directory is passed over.
func TestRootsInNoProjectGiveTheFirstFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	folder, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	answer := `{"jsonrpc":"2.0","id":"berth-shim-roots","result":{"roots":[{"uri":"file://` + home + `"},{"uri":"file://` + folder + `"}]}}`
	got, err := projectAmongRoots([]byte(answer))
	if err != nil || got != (Place{Root: folder, Folder: true}) {
		t.Fatalf("projectAmongRoots = %+v, %v; want the folder %s", got, err, folder)
	}
	project := mkProject(t)
	answer = `{"jsonrpc":"2.0","id":"berth-shim-roots","result":{"roots":[{"uri":"file://` + folder + `"},{"uri":"file://` + project + `/.praxis-os"}]}}`
	if got, err := projectAmongRoots([]byte(answer)); err != nil || got != (Place{Root: project}) {
		t.Fatalf("projectAmongRoots = %+v, %v; want the project %s, which a root is inside", got, err, project)
	}
}
