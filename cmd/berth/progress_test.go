package main

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

func TestProgressOnATerminalOnlyAfterASecond(t *testing.T) {
	var quick brokertest.SyncBuffer
	p := newProgress(&quick, true, "waiting for search_standards")
	p.end()
	if quick.String() != "" {
		t.Fatalf("a short wait printed %q", quick.String())
	}

	var slow brokertest.SyncBuffer
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
	var piped brokertest.SyncBuffer
	p := newProgress(&piped, false, "waiting")
	p.news("step")
	p.end()
	if piped.String() != "" {
		t.Fatalf("piped progress wrote %q", piped.String())
	}
}
