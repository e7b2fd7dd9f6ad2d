package shim

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// Once its reader is gone (done closed), readLines returns at the next
// line instead of blocking on a send nobody receives.
func TestReadLinesReturnsOnceItsReaderIsGone(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	out := make(chan []byte) // unbuffered, as the shim's
	done := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		readLines(pr, out, done, slog.New(slog.DiscardHandler))
	}()
	go pw.Write([]byte("{\"a\":1}\n"))
	select {
	case l := <-out:
		if string(l) != `{"a":1}` {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no first line")
	}
	close(done) // the reader returns
	// The next line is read (io.Pipe's Write returns once it is) and has
	// nobody to go to.
	if _, err := pw.Write([]byte("{\"b\":2}\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("readLines still blocks on a send after its reader returned")
	}
}
