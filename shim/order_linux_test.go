package shim

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/coder/websocket"
)

// TestReplyIsReadAfterTheNotificationBeforeIt: the broker sends a call's
// last progress notification and its reply back to back; the IDE (here a
// reader that, like Node.js, reads whatever is waiting on its stdout pipe
// or socketpair) reads the notification in one read and the reply in a
// later one. In one read, a client on the TypeScript SDK would settle the
// reply first and drop the notification.
func TestReplyIsReadAfterTheNotificationBeforeIt(t *testing.T) {
	const (
		request = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`
		note    = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3,"total":3}}`
		reply   = `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`
	)
	for _, kind := range []string{"socketpair", "pipe"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ide, stdout := stdoutPair(t, kind)
			broker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
				if err != nil {
					return
				}
				defer ws.CloseNow()
				if _, got, err := ws.Read(ctx); err != nil || string(got) != request {
					t.Errorf("the broker read %q, %v; want the request", got, err)
					return
				}
				for _, m := range []string{note, reply} {
					if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
						t.Errorf("the broker's write: %v", err)
						return
					}
				}
				_, _, _ = ws.Read(ctx) // until the shim leaves
			}))
			defer broker.Close()

			stdinR, stdinW := io.Pipe()
			defer stdinW.Close()
			f := &forwarder{
				dial: func(ctx context.Context) (*websocket.Conn, error) {
					c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(broker.URL, "http"), &websocket.DialOptions{Subprotocols: []string{"mcp"}})
					return c, err
				},
				in: stdinR, out: stdout, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			// held is closed when the shim asks whether the IDE has read
			// what came before the reply: it is holding the reply.
			held := make(chan struct{})
			var once sync.Once
			if count := unreadOf(stdout); count != nil {
				f.unread = func() (int, error) { once.Do(func() { close(held) }); return count() }
			} else {
				t.Fatalf("Linux cannot tell what is unread on a %s", kind)
			}
			done := make(chan error, 1)
			go func() { done <- f.run(ctx) }()
			if _, err := io.WriteString(stdinW, request+"\n"); err != nil {
				t.Fatal(err)
			}

			// The IDE reads once the reply is held, or once both messages
			// wait on its stdout (then they come in one read).
			both := len(note) + len(reply) + 2
			for waiting := 0; waiting < both; {
				select {
				case <-held:
					waiting = both
				case <-time.After(time.Millisecond):
					waiting = readable(t, ide)
				case <-ctx.Done():
					t.Fatalf("the shim wrote neither the reply nor held it: %d bytes on stdout", readable(t, ide))
				}
			}
			buf := make([]byte, 64<<10)
			n, err := ide.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(buf[:n]); got != note+"\n" {
				t.Fatalf("the IDE's first read = %q; want the notification alone, the reply in a later read", got)
			}
			n, err = io.ReadAtLeast(ide, buf, len(reply)+1)
			if err != nil || string(buf[:n]) != reply+"\n" {
				t.Fatalf("the IDE's next read = %q, %v; want the reply", buf[:n], err)
			}
			stdinW.Close()
			if err := <-done; err != nil {
				t.Fatalf("the forwarder: %v", err)
			}
		})
	}
}

// stdoutPair is the IDE's end and the shim's end of the shim's stdout:
// a socketpair (what Node.js gives a child) or a pipe.
func stdoutPair(t *testing.T, kind string) (ide, shim *os.File) {
	t.Helper()
	if kind == "pipe" {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ide, shim = os.NewFile(uintptr(fds[0]), "ide"), os.NewFile(uintptr(fds[1]), "shim")
	t.Cleanup(func() { ide.Close(); shim.Close() })
	return ide, shim
}

// readable is how many bytes wait to be read on f.
func readable(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil || errno != 0 {
		t.Fatalf("FIONREAD: %v %v", err, errno)
	}
	return int(n)
}
