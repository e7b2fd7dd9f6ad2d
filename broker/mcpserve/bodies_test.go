package mcpserve

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStalledBodyIsCutButLongAnswersAreNot: a POST whose body stops
// arriving is answered 408 once bodyTimeout passes; a POST whose body
// arrived gets an answer that streams for longer than that.
func TestStalledBodyIsCutButLongAnswersAreNot(t *testing.T) {
	const bodyTimeout = 200 * time.Millisecond
	release := make(chan struct{})
	ts := httptest.NewServer(CheckPosts(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
			fmt.Fprint(w, "data: two\n\n")
		case <-r.Context().Done():
		}
	}), bodyTimeout))
	defer ts.Close()

	// A body that stops after 10 of its 100 bytes.
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // bounds the test, not the broker
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a stalled body: %d, want 408", resp.StatusCode)
	}

	// A whole body: the answer streams past bodyTimeout.
	req, _ := http.NewRequest("POST", ts.URL+"/sse", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	if line, _ := stream.ReadString('\n'); line != "data: one\n" {
		t.Fatalf("first event %q", line)
	}
	time.Sleep(3 * bodyTimeout) // outlast the body's deadline: the answer must not care
	close(release)
	_, _ = stream.ReadString('\n')
	if line, err := stream.ReadString('\n'); line != "data: two\n" {
		t.Fatalf("the answer after 3x bodyTimeout: %q %v, want its second event", line, err)
	}
}
