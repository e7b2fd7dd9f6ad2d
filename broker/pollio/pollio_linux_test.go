//go:build linux && !race

package pollio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pair returns both ends of a loopback TCP connection: the accepted one
// through Listener, and the dialled one as it is.
func pair(t *testing.T) (accepted, dialled net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pl := Listener(ln)
	defer pl.Close()
	type res struct {
		c   net.Conn
		err error
	}
	got := make(chan res, 1)
	go func() {
		c, err := pl.Accept()
		got <- res{c, err}
	}()
	dialled, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		dialled.Close()
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.c.Close(); dialled.Close() })
	return r.c, dialled
}

// TestConnCarriesBothWays: what one end writes the other reads, both
// ways, including a write far larger than the socket's buffers (it waits
// for the reader, more than once), and the end of the stream is io.EOF.
func TestConnCarriesBothWays(t *testing.T) {
	a, b := pair(t)
	if _, ok := a.(*conn); !ok {
		t.Fatalf("accepted a %T, want the direct connection", a)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	done := make(chan error, 1)
	go func() {
		n, err := a.Write(big)
		if err == nil && n != len(big) {
			err = io.ErrShortWrite
		}
		done <- err
	}()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the bytes read differ from the bytes written")
	}
	if _, err := b.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(a, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if n, err := a.Read(nil); n != 0 || err != nil {
		t.Fatalf("an empty read: %d, %v", n, err)
	}
	b.Close()
	if n, err := a.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("read after the other end closed: %d, %v; want 0, io.EOF", n, err)
	}
}

// TestConnDeadlineAndClose: a read waits for the descriptor through the
// poller, so a deadline ends it with a timeout and closing the connection
// ends it with net.ErrClosed, the errors net's own Read returns.
func TestConnDeadlineAndClose(t *testing.T) {
	a, _ := pair(t)
	if err := a.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	_, err := a.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v; want a timeout", err)
	}
	if err := a.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := a.Read(buf)
		ended <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read wait (it ends either way)
	a.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read of a closed connection: %v; want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the connection did not end its read")
	}
	if _, err := a.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write to a closed connection: %v; want net.ErrClosed", err)
	}
}

// TestConnWriteAfterReset: a write the kernel refuses (the other end
// reset the connection) fails as net.Conn's Write fails, a *net.OpError
// holding the system call's error.
func TestConnWriteAfterReset(t *testing.T) {
	a, b := pair(t)
	if err := b.(*net.TCPConn).SetLinger(0); err != nil { // close sends RST
		t.Fatal(err)
	}
	b.Close()
	deadline := time.Now().Add(10 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		_, err = a.Write([]byte("after the reset"))
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" || !(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		t.Fatalf("write after a reset: %v; want a write *net.OpError with ECONNRESET or EPIPE", err)
	}
}

// TestHTTPServerOverListener: an HTTP server on Listener answers requests
// on a kept-alive connection, and a handler sees its client leave (the
// server's background read of the connection, ended by a deadline at
// each request's end, runs through Conn).
func TestHTTPServerOverListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, left := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/wait" {
			close(entered)
			<-r.Context().Done()
			once.Do(func() { close(left) })
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(append([]byte("echo: "), body...))
	})}
	go srv.Serve(Listener(ln))
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer hc.CloseIdleConnections()
	for i := range 50 {
		msg := strings.Repeat("x", i*97)
		resp, err := hc.Post(url+"/echo", "text/plain", strings.NewReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(got) != "echo: "+msg {
			t.Fatalf("request %d: %q, %v", i, got, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/wait", strings.NewReader("{}"))
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the handler")
	}
	cancel()
	<-gone
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not see its client leave")
	}
}

// TestFilePipe: a pipe's ends through File carry a write larger than the
// pipe's buffer (the writer waits for the reader), the end of the stream
// is io.EOF, a closed end fails with os.ErrClosed, and a write to a pipe
// nobody reads fails with EPIPE in an *fs.PathError, as *os.File's do.
func TestFilePipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := File(r), File(w)
	if _, ok := pr.(*file); !ok {
		t.Fatalf("File of a pipe is a %T, want the direct file", pr)
	}
	big := bytes.Repeat([]byte("line of a server\n"), 1<<16) // 1 MiB
	done := make(chan error, 1)
	go func() {
		_, err := pw.Write(big)
		done <- errors.Join(err, pw.Close())
	}()
	got, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the bytes read differ from the bytes written")
	}
	pr.Close()
	if _, err := pr.Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("read of a closed file: %v; want os.ErrClosed", err)
	}

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pw2 := File(w2)
	defer pw2.Close()
	r2.Close()
	_, err = pw2.Write([]byte("nobody reads this\n"))
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Op != "write" || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write to a pipe nobody reads: %v; want a write *fs.PathError with EPIPE", err)
	}
}

// TestFileReadUnblocksOnClose: a read waiting on an empty pipe ends when
// the file is closed, with os.ErrClosed.
func TestFileReadUnblocksOnClose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pr := File(r)
	ended := make(chan error, 1)
	go func() {
		_, err := pr.Read(make([]byte, 16))
		ended <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read wait (it ends either way)
	pr.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("read of a closed pipe: %v; want os.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the pipe did not end its read")
	}
}

// TestFileNotPolled: a file the poller does not hold (a regular file,
// read and written by blocking system calls) is returned as it is.
func TestFileNotPolled(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := File(f); got != io.ReadWriteCloser(f) {
		t.Fatalf("File of a regular file is a %T, want the *os.File itself", got)
	}
}
