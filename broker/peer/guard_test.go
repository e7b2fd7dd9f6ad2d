package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/coder/websocket"
)

// logBuf is a slog destination tests can read while servers write.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }

// lines returns the JSON log records whose message contains msg.
func (l *logBuf) lines(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && strings.Contains(fmt.Sprint(rec["msg"]), msg) {
			out = append(out, rec)
		}
	}
	return out
}

// guarded serves h behind g on a loopback port and returns its base URL.
func guarded(t *testing.T, g *Guard, h http.Handler) string {
	t.Helper()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	g.Install(srv)
	return serve(t, srv, listenLoopback(t))
}

// serve runs srv on ln until the test ends and returns its base URL.
func serve(t *testing.T, srv *http.Server, ln net.Listener) string {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return "http://" + ln.Addr().String()
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// fakeGuard is a guard whose lookups answer uid/err and are counted.
func fakeGuard(token string, log io.Writer, uid uint32, err error) (*Guard, *atomic.Int32) {
	g := NewGuard(Options{Token: token, Name: "test", Logger: slog.New(slog.NewJSONHandler(log, nil))})
	var n atomic.Int32
	g.lookup = func(net.Conn) (uint32, error) { n.Add(1); return uid, err }
	return g, &n
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "secret data") })

func get(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// wantRefused checks a 403 with a JSON error and none of the handler's data.
func wantRefused(t *testing.T, code int, body string) {
	t.Helper()
	var e api.ErrorBody
	if code != http.StatusForbidden || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" || e.Code != api.CodeNotOwner || strings.Contains(body, "secret") {
		t.Fatalf("got %d %q, want 403 with a JSON error and no data", code, body)
	}
}

func TestGuardAdmitsTheOwnerAndLooksUpOncePerConnection(t *testing.T) {
	var logs logBuf
	g, lookups := fakeGuard("", &logs, uint32(0), nil)
	g.owner = 0
	url := guarded(t, g, hello)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for range 5 {
		if code, body := get(t, c, url, ""); code != http.StatusOK || body != "secret data" {
			t.Fatalf("owner got %d %q", code, body)
		}
	}
	if n := lookups.Load(); n != 1 {
		t.Fatalf("5 requests on one connection made %d lookups, want 1", n)
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for range 3 {
		get(t, fresh, url, "")
	}
	if n := lookups.Load(); n != 4 {
		t.Fatalf("3 more connections: %d lookups in all, want 4", n)
	}
	if l := logs.lines("refused"); len(l) != 0 {
		t.Fatalf("the owner's requests were logged as refused: %v", l)
	}
}

func TestGuardRefusesAnotherAccount(t *testing.T) {
	var logs logBuf
	g, _ := fakeGuard("tok-0123456789abcdef", &logs, 1001, nil)
	g.owner = 1000
	url := guarded(t, g, hello)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, url+"/projects", strings.NewReader(`{"root": "/tmp/x"}`))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantRefused(t, resp.StatusCode, string(body))
	if !resp.Close {
		t.Error("the refused connection is kept open")
	}
	get(t, c, url, "") // a second connection refused
	if code, b := get(t, c, url, "wrong-token"); code != http.StatusUnauthorized || strings.Contains(b, "secret") {
		t.Fatalf("another account with a wrong token: %d %q, want 401", code, b)
	}
	recs := logs.lines("another account")
	if len(recs) != 2 {
		t.Fatalf("%d log lines for two refused connections, want 2: %v", len(recs), recs)
	}
	for _, r := range recs {
		if r["peer_uid"] != float64(1001) || r["listener"] != "test" {
			t.Errorf("log line %v does not name uid 1001 and the listener", r)
		}
		if strings.Contains(fmt.Sprint(r), "/tmp/x") {
			t.Errorf("log line %v carries the peer's data", r)
		}
	}
	// The token is the second key, whoever holds it.
	if code, body := get(t, c, url, "tok-0123456789abcdef"); code != http.StatusOK || body != "secret data" {
		t.Fatalf("with the token: %d %q", code, body)
	}
}

func TestGuardRefusesAnUnknownAccountWithoutTheToken(t *testing.T) {
	for _, lookupErr := range []error{ErrUnsupported, ErrNoPeer, errors.New("netlink: boom")} {
		t.Run(lookupErr.Error(), func(t *testing.T) {
			var logs logBuf
			g, _ := fakeGuard("tok-0123456789abcdef", &logs, 0, lookupErr)
			g.owner = 0 // an unknown owner must not pass for root
			url := guarded(t, g, hello)
			c := &http.Client{Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			code, body := get(t, c, url, "")
			wantRefused(t, code, body)
			if !strings.Contains(body, "token") {
				t.Errorf("the refusal %q does not name the fix", body)
			}
			if l := logs.lines("unknown"); len(l) != 1 || !strings.Contains(fmt.Sprint(l[0]["err"]), lookupErr.Error()) {
				t.Fatalf("log lines %v, want one naming %v", l, lookupErr)
			}
			if code, body := get(t, c, url, "tok-0123456789abcdef"); code != http.StatusOK || body != "secret data" {
				t.Fatalf("with the token: %d %q", code, body)
			}
		})
	}
}

func TestGuardWithoutTokenRefusesEveryUnknownRequest(t *testing.T) {
	g, _ := fakeGuard("", io.Discard, 0, ErrUnsupported)
	url := guarded(t, g, hello)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, tok := range []string{"", "anything"} {
		code, body := get(t, c, url, tok)
		wantRefused(t, code, body)
	}
}

func TestGuardWithoutConnContextFailsClosed(t *testing.T) {
	var logs logBuf
	g, lookups := fakeGuard("tok-0123456789abcdef", &logs, 0, nil)
	g.owner = 0
	url := serve(t, &http.Server{Handler: g.Wrap(hello)}, listenLoopback(t)) // ConnContext forgotten
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	code, body := get(t, c, url, "")
	wantRefused(t, code, body)
	if code, _ := get(t, c, url, "tok-0123456789abcdef"); code != http.StatusOK {
		t.Fatalf("with the token: %d", code)
	}
	if lookups.Load() != 0 || len(logs.lines("no ConnContext")) != 1 {
		t.Fatalf("lookups %d, logs %v", lookups.Load(), logs.lines(""))
	}
}

func TestGuardInstallKeepsTheServersConnContext(t *testing.T) {
	type key struct{}
	g, _ := fakeGuard("", io.Discard, 7, nil)
	g.owner = 7
	srv := &http.Server{
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context { return context.WithValue(ctx, key{}, "kept") },
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, r.Context().Value(key{}))
		}),
	}
	g.Install(srv)
	url := serve(t, srv, listenLoopback(t))
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if code, body := get(t, c, url, ""); code != 200 || body != "kept" {
		t.Fatalf("got %d %q", code, body)
	}
}

// TestGuardCoversWebSocketUpgrades: the upgrade is an HTTP request, so a
// foreign account never gets a WebSocket.
func TestGuardCoversWebSocketUpgrades(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		typ, msg, err := c.Read(r.Context())
		if err == nil {
			c.Write(r.Context(), typ, msg)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	owner, _ := fakeGuard("", io.Discard, 1000, nil)
	owner.owner = 1000
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(guarded(t, owner, echo), "http"), nil)
	if err != nil {
		t.Fatalf("owner's upgrade: %v", err)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := ws.Read(ctx); err != nil || string(msg) != "ping" {
		t.Fatalf("echo: %q, %v", msg, err)
	}
	ws.Close(websocket.StatusNormalClosure, "")

	var logs logBuf
	other, _ := fakeGuard("", &logs, 1001, nil)
	other.owner = 1000
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(guarded(t, other, echo), "http"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign upgrade: resp %v, err %v; want 403", resp, err)
	}
	if len(logs.lines("another account")) != 1 {
		t.Fatalf("logs: %v", logs.lines(""))
	}
}

// TestGuardAdmitIsAThirdKey: Admit is asked only about requests the
// account check and the token refused, and a yes admits them.
func TestGuardAdmitIsAThirdKey(t *testing.T) {
	var asked atomic.Int32
	g := NewGuard(Options{Token: "tok-0123456789abcdef", Admit: func(r *http.Request) bool {
		asked.Add(1)
		return r.Header.Get("Authorization") == "Bearer session-key"
	}})
	g.lookup = func(net.Conn) (uint32, error) { return 1001, nil }
	g.owner = 1000
	url := guarded(t, g, hello)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if code, body := get(t, c, url, "session-key"); code != http.StatusOK || body != "secret data" {
		t.Fatalf("with a key Admit knows: %d %q", code, body)
	}
	if code, body := get(t, c, url, "other-key"); code != http.StatusUnauthorized || strings.Contains(body, "secret") {
		t.Fatalf("with a key neither the token nor Admit knows: %d %q, want 401", code, body)
	}
	if code, _ := get(t, c, url, "tok-0123456789abcdef"); code != http.StatusOK {
		t.Fatalf("with the token: %d", code)
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("Admit was asked %d times, want 2 (never when the token admitted)", n)
	}
	g.owner = 1001 // now the peer is the owner: Admit is not asked
	get(t, c, url, "")
	if n := asked.Load(); n != 2 {
		t.Fatalf("Admit was asked about the owner's request")
	}
}

// TestGuardTokenOnlyNeverLooksUp: with TokenOnly even the owner's own
// connections need the token, and no lookup is made.
func TestGuardTokenOnlyNeverLooksUp(t *testing.T) {
	var logs logBuf
	g := NewGuard(Options{Token: "tok-0123456789abcdef", TokenOnly: true, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	url := guarded(t, g, hello)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	code, body := get(t, c, url, "")
	wantRefused(t, code, body)
	if !strings.Contains(body, "berth dashboard") {
		t.Errorf("the refusal %q does not name the dashboard's way in", body)
	}
	if l := logs.lines("unknown"); len(l) != 1 || l[0]["err"] != ErrUnsupported.Error() {
		t.Fatalf("log lines %v, want one naming %v", l, ErrUnsupported)
	}
	if code, _ := get(t, c, url, "tok-0123456789abcdef"); code != http.StatusOK {
		t.Fatalf("with the token: %d", code)
	}
}

// TestGuardAnswersAWrongTokenWith401: a bearer token that is presented and
// wrong gets 401 from the owner as from anyone (the account does not make
// a bad credential good), with the right token or none the owner is
// admitted, and the right token admits another account.
func TestGuardAnswersAWrongTokenWith401(t *testing.T) {
	const tok = "tok-0123456789abcdef"
	for _, tc := range []struct {
		name     string
		uid      uint32
		lookErr  error
		token    string
		wantCode int
	}{
		{"owner, wrong token", 1000, nil, "tok-wrong", http.StatusUnauthorized},
		{"owner, a prefix of the token", 1000, nil, tok[:10], http.StatusUnauthorized},
		{"owner, right token", 1000, nil, tok, http.StatusOK},
		{"owner, no token", 1000, nil, "", http.StatusOK},
		{"another account, wrong token", 1001, nil, "tok-wrong", http.StatusUnauthorized},
		{"another account, right token", 1001, nil, tok, http.StatusOK},
		{"unknown account, wrong token", 0, ErrUnsupported, "tok-wrong", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuf
			g, _ := fakeGuard(tok, &logs, tc.uid, tc.lookErr)
			g.owner = 1000
			url := guarded(t, g, hello)
			c := &http.Client{Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			code, body := get(t, c, url, tc.token)
			if code != tc.wantCode {
				t.Fatalf("got %d %q, want %d", code, body, tc.wantCode)
			}
			if code == http.StatusUnauthorized {
				var e api.ErrorBody
				if json.Unmarshal([]byte(body), &e) != nil || e.Code != api.CodeUnauthorized || !strings.Contains(e.Error, "state file") || strings.Contains(body, "secret") {
					t.Fatalf("401 body %q: want a JSON error naming the fix and no data", body)
				}
				if l := logs.lines("wrong bearer token"); len(l) != 1 || strings.Contains(fmt.Sprint(l), "tok-wrong") {
					t.Fatalf("log of the refusal: %v (want one line, without the token)", l)
				}
			}
		})
	}
	// A guard without a token has nothing to compare: the owner's requests
	// pass whatever Authorization they carry (auth: none).
	g, _ := fakeGuard("", io.Discard, 1000, nil)
	g.owner = 1000
	url := guarded(t, g, hello)
	if code, body := get(t, http.DefaultClient, url, "anything"); code != http.StatusOK {
		t.Fatalf("no token configured, the owner with a bearer: %d %q", code, body)
	}
}
