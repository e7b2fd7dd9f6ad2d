package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ProjectDir), 0o755); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(root)
	return real
}

func TestStateFileRoundTripAndSchema(t *testing.T) {
	root := newRoot(t)
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	sf := NewStateFile(TransportDual, 4300, 42, started, "shop", root)
	if err := WriteStateFile(root, sf); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(StatePath(root))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "transport", "port", "host", "path", "url", "pid", "started_at", "project"} {
		if _, ok := m[k]; !ok {
			t.Errorf("state file lacks %q", k)
		}
	}
	if m["started_at"] != "2026-01-02T02:04:05Z" || m["url"] != "http://127.0.0.1:4300/mcp" || m["host"] != "127.0.0.1" {
		t.Errorf("state file = %s", raw)
	}
	if _, ok := m["headers"]; ok {
		t.Error("headers written with auth off")
	}
	got, err := ReadStateFile(root)
	if err != nil || *got.Port != 4300 || got.Project.Root != root {
		t.Fatalf("read back %+v %v", got, err)
	}
	fi, _ := os.Stat(StatePath(root))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	// No temp files left behind.
	entries, _ := os.ReadDir(filepath.Join(root, ProjectDir))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

func TestStdioStateFileHasNullPortAndURL(t *testing.T) {
	root := newRoot(t)
	if err := WriteStateFile(root, NewStateFile(TransportStdio, 4300, 42, time.Now(), "p", root)); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(StatePath(root))
	var m map[string]any
	json.Unmarshal(raw, &m)
	if m["port"] != nil || m["url"] != nil || m["transport"] != "stdio" {
		t.Fatalf("stdio state file = %s", raw)
	}
	if v, ok := m["port"]; !ok || v != nil {
		t.Fatal("port must be present and null")
	}
}

func TestRemoveStateFileOnlyIfOwned(t *testing.T) {
	root := newRoot(t)
	WriteStateFile(root, NewStateFile(TransportDual, 4300, 42, time.Now(), "p", root))
	if removed, _ := RemoveStateFileIf(root, 43, 4300); removed {
		t.Fatal("removed another broker's file")
	}
	if removed, _ := RemoveStateFileIf(root, 42, 4301); removed {
		t.Fatal("removed a file naming another port")
	}
	if removed, err := RemoveStateFileIf(root, 42, 4300); !removed || err != nil {
		t.Fatalf("own file not removed: %v", err)
	}
	if removed, err := RemoveStateFileIf(root, 42, 4300); removed || err != nil {
		t.Fatalf("missing file: %v %v", removed, err)
	}
}

func TestGitignoreIsAppendedOnce(t *testing.T) {
	root := newRoot(t)
	gi := filepath.Join(root, ProjectDir, ".gitignore")
	os.WriteFile(gi, []byte("cache/"), 0o640)
	for i := 0; i < 2; i++ {
		if err := EnsureGitignored(root); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ := os.ReadFile(gi)
	if string(raw) != "cache/\n"+StateFileName+"\n" {
		t.Fatalf(".gitignore = %q", raw)
	}
	if fi, _ := os.Stat(gi); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}
}

func TestCorruptStateFileIsAClearError(t *testing.T) {
	root := newRoot(t)
	for _, body := range []string{"{", `{"transport":"dual","pid":1,"started_at":"2026-01-01T00:00:00Z"}`, `{"transport":"carrier-pigeon"}`} {
		os.WriteFile(StatePath(root), []byte(body), 0o600)
		if _, err := ReadStateFile(root); err == nil || !strings.Contains(err.Error(), StatePath(root)) {
			t.Errorf("%s: err = %v", body, err)
		}
	}
}

func FuzzParseStateFile(f *testing.F) {
	sf := NewStateFile(TransportDual, 4242, 7, time.Unix(0, 0), "p", "/r")
	good, _ := json.Marshal(sf)
	f.Add(good)
	f.Add([]byte(`{"transport":"stdio","port":null,"url":null,"pid":3,"started_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"port": 99999999999999999999}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStateFile(data)
		if err != nil {
			return
		}
		// Whatever parses validates: a reader can trust port and url.
		if s.Transport != TransportStdio && (s.Port == nil || *s.Port <= 0 || *s.Port > 65535 || s.URL == nil) {
			t.Fatalf("accepted %+v", s)
		}
		if s.PID <= 0 {
			t.Fatalf("accepted pid %d", s.PID)
		}
	})
}

func TestSameStateFileIsNotRewritten(t *testing.T) {
	root := newRoot(t)
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sf := NewStateFile(TransportDual, 4300, 42, started, "shop", root)
	if err := WriteStateFile(root, sf); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(StatePath(root))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteStateFile(root, sf); err != nil {
		t.Fatal(err)
	}
	same, err := os.Stat(StatePath(root))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, same) {
		t.Error("an identical record was written again (the file was replaced)")
	}

	// Another record, or the same bytes with a loose mode, is written.
	other := NewStateFile(TransportDual, 4301, 42, started, "shop", root)
	if err := WriteStateFile(root, other); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadStateFile(root); err != nil || *got.Port != 4301 {
		t.Fatalf("after a new record: %+v, %v", got, err)
	}
	if err := os.Chmod(StatePath(root), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteStateFile(root, other); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(StatePath(root)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("same bytes with mode 0644: %v, %v; want rewritten with 0600", fi.Mode(), err)
	}
}

func TestStateTransportAdvertisesHTTPWhenAnyoneAskedForIt(t *testing.T) {
	for _, tc := range []struct {
		asked []string
		want  string
	}{
		{nil, TransportStdio},
		{[]string{TransportStdio}, TransportStdio},
		{[]string{TransportStdio, TransportDual}, TransportDual},
		{[]string{TransportHTTP, TransportStdio}, TransportHTTP},
		{[]string{TransportHTTP, TransportDual}, TransportDual},
		{[]string{TransportStdio, TransportStdio, TransportHTTP}, TransportHTTP},
	} {
		if got := StateTransport(tc.asked); got != tc.want {
			t.Errorf("StateTransport(%v) = %q, want %q", tc.asked, got, tc.want)
		}
	}
}
