package controlapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
)

// TestReadBodiesAnswersAStalledBody408: a request whose body stalls is
// answered 408 body_timeout once the deadline passes and its connection
// closed; a whole body reaches the route; one over the limit gets 413;
// a request without a body is not touched.
func TestReadBodiesAnswersAStalledBody408(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: ReadBodies(timeout, 16)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %q", r.Method, b)
	}))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	raw := func(req string) (string, error) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The server closes the connection after a 408: the next read ends.
		if resp.StatusCode == http.StatusRequestTimeout {
			if _, err := c.Read(make([]byte, 1)); err != io.EOF {
				return "", fmt.Errorf("after the 408 the connection is still open (%v)", err)
			}
		}
		return fmt.Sprintf("%d %s", resp.StatusCode, body), nil
	}
	start := time.Now()
	got, err := raw("POST /projects HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"ro")
	if err != nil {
		t.Fatal(err)
	}
	var e api.ErrorBody
	code, body, _ := strings.Cut(got, " ")
	if code != "408" || json.Unmarshal([]byte(body), &e) != nil || e.Code != api.CodeBodyTimeout || time.Since(start) < timeout {
		t.Fatalf("a stalled body: %s after %s, want 408 %s after %s", got, time.Since(start), api.CodeBodyTimeout, timeout)
	}
	if got, err := raw("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"); err != nil || got != `200 POST "abcd"` {
		t.Fatalf("a whole body: %s %v", got, err)
	}
	if got, err := raw("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n" + strings.Repeat("a", 17)); err != nil || !strings.HasPrefix(got, "413 ") || !strings.Contains(got, string(api.CodeBodyTooLarge)) {
		t.Fatalf("a body over the limit: %s %v", got, err)
	}
	if got, err := raw("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil || got != `200 GET ""` {
		t.Fatalf("no body: %s %v", got, err)
	}
}
