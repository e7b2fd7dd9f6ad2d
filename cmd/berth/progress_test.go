package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

// syncBuffer is a bytes.Buffer safe for the drawing goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressOnATerminalOnlyAfterASecond(t *testing.T) {
	var quick syncBuffer
	p := newProgress(&quick, true, "waiting for search_standards")
	p.end()
	if quick.String() != "" {
		t.Fatalf("a short wait printed %q", quick.String())
	}

	var slow syncBuffer
	p = newProgress(&slow, true, "waiting for search_standards")
	p.news("indexing standards: 10 of 40 files")
	brokertest.Poll(brokertest.WaitLimit, func() bool { return strings.Contains(slow.String(), "indexing standards") })
	p.end()
	p.end() // a second end is harmless
	out := slow.String()
	if !strings.HasPrefix(out, "\rwaiting for search_standards… ") || !strings.Contains(out, "s (indexing standards: 10 of 40 files)") {
		t.Fatalf("progress line %q", out)
	}
	// The line is erased at the end: the last write blanks it and returns.
	last := out[strings.LastIndex(out[:len(out)-1], "\r"):]
	if strings.Trim(last, "\r ") != "" {
		t.Fatalf("the line was not erased: %q", last)
	}
}

func TestProgressIsSilentWhenPiped(t *testing.T) {
	var piped syncBuffer
	p := newProgress(&piped, false, "waiting")
	p.news("step")
	p.end()
	if piped.String() != "" {
		t.Fatalf("piped progress wrote %q", piped.String())
	}
}
