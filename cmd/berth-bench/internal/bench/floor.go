package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"
)

// The floor: a minimal net/http JSON-RPC handler in a process of its own,
// called by the same client as Berth's project port, in the same rounds.
// It answers a tools/call with what current_date answers (the date as
// structured content and as text), so that the two differ only in what
// serves them.
const (
	floorMode    = "floor-server" // berth-bench's hidden mode that serves it
	subjectFloor = "nethttp-floor"
	// The same handler served by the bench's own process: no second
	// process to wake up, the figure the issue of scale quotes.
	subjectFloorInProcess = "nethttp-floor-in-process"
)

// serveFloor serves the floor on a loopback port, prints its URL on out and
// serves until in ends (the bench closes it) or ctx does.
func serveFloor(ctx context.Context, in io.Reader, out io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(floorRPC), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if _, err := fmt.Fprintf(out, "http://%s/mcp\n", ln.Addr()); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, in); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// floorRPC decodes one JSON-RPC request and answers it with the date.
func floorRPC(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	now := time.Now()
	date, _ := json.Marshal(map[string]any{
		"iso_datetime": now.Format(time.RFC3339), "iso_date": now.Format(time.DateOnly), "time": now.Format(time.TimeOnly),
		"weekday": now.Weekday().String(), "formatted": now.Format("Monday, January 2, 2006"), "timezone": now.Location().String(),
		"utc_datetime": now.UTC().Format(time.RFC3339), "unix": now.Unix(),
	})
	text, _ := json.Marshal(string(date))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}],"structuredContent":%s}}`, req.ID, text, date)
}

// startFloor runs the floor in a new berth-bench process and returns it
// (to stop) and its URL.
func startFloor(errLog io.Writer) (*child, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	c, err := startChild([]string{exe, floorMode}, os.Environ(), errLog)
	if err != nil {
		return nil, "", err
	}
	url, err := readURL(c.client.out)
	if err != nil {
		c.stop()
		return nil, "", fmt.Errorf("the floor server: %w", err)
	}
	return c, url, nil
}

func readURL(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		return "", fmt.Errorf("unexpected first line %q", line)
	}
	return url, nil
}

// floors are the floor's process and the in-process floor, and their
// subjects in a round of calls.
type floors struct {
	c                  *child
	srv                *httptest.Server
	subject, inProcess *hopSubject
}

func (f *floors) stop() {
	f.c.stop()
	f.srv.Close()
}

// startFloors starts both floors and opens a session on each with hc, the
// client of the other HTTP subjects.
func startFloors(ctx context.Context, hc *http.Client, errLog io.Writer) (*floors, error) {
	c, url, err := startFloor(errLog)
	if err != nil {
		return nil, err
	}
	f := &floors{c: c, srv: httptest.NewServer(http.HandlerFunc(floorRPC))}
	for _, x := range []struct {
		name, url string
		dst       **hopSubject
	}{{subjectFloor, url, &f.subject}, {subjectFloorInProcess, f.srv.URL + "/mcp", &f.inProcess}} {
		s, err := openHTTPSession(ctx, hc, x.url)
		if err != nil {
			f.stop()
			return nil, err
		}
		*x.dst = &hopSubject{name: x.name, call: func(int) error { return s.callTool(ctx, hopTool) }}
	}
	return f, nil
}
