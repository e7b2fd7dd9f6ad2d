package shim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
)

// oldAttachRequest is POST /projects as brokers before the version
// handshake decoded it: unknown fields refused.
type oldAttachRequest struct {
	Root string `json:"root"`
	Kind string `json:"kind,omitempty"`
	PID  int    `json:"pid,omitempty"`
}

// syncLog is a log sink safe for the server goroutine and the test.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *syncLog) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestAttachToABrokerOlderThanTheHandshake(t *testing.T) {
	home, err := os.MkdirTemp("", "bh")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, api.ProjectDir), 0o755); err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)

	var (
		mu       sync.Mutex
		attaches []string
	)
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		answer(w, 200, api.Health{Status: "ok", Version: "0.0.9", PID: os.Getpid()})
	})
	mux.HandleFunc("POST /projects", func(w http.ResponseWriter, r *http.Request) {
		var req oldAttachRequest
		mu.Lock()
		defer mu.Unlock()
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			attaches = append(attaches, "refused: "+err.Error())
			answer(w, 400, map[string]string{"error": "malformed JSON body: " + err.Error()}) // no code
			return
		}
		attaches = append(attaches, "ok")
		answer(w, 200, map[string]any{ // an old broker's answer: no broker_version
			"id": "p-1", "name": "p", "root": req.Root, "port": 4242, "url": "http://127.0.0.1:4242/mcp",
			"started_at": time.Now().UTC(), "lease": "l1", "broker_pid": os.Getpid(),
		})
	})
	ln, err := net.Listen("unix", api.SocketPath(home))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	logs := &syncLog{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := Attach(ctx, AttachOptions{Home: home, Root: root, Autostart: Autostart{Disabled: true},
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("attach to an old broker: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(attaches) != 2 || !strings.Contains(attaches[0], `unknown field "version"`) || attaches[1] != "ok" {
		t.Fatalf("requests: %q", attaches)
	}
	if a.Resp.BrokerVersion != "0.0.9" {
		t.Errorf("broker version %q, want it from /health", a.Resp.BrokerVersion)
	}
	// It is older, it has no /shutdown: the shim warns and carries on.
	if !strings.Contains(logs.String(), "older than this shim") {
		t.Errorf("no warning about the old broker:\n%s", logs.String())
	}
	// The broker writes state files; a shim never does, not even for a broker that does not.
	if _, err := os.Stat(api.StatePath(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the shim wrote a state file: %v", err)
	}
}
