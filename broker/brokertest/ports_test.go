package brokertest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPortRangesNeverOverlap: ranges handed out while earlier ones are in
// use share no port, lie below every ephemeral range, and can be bound.
func TestPortRangesNeverOverlap(t *testing.T) {
	type span struct{ start, end int }
	var got []span
	for i := range 40 {
		s, e := PortRange(t, 1+i%7)
		if e-s != i%7 {
			t.Fatalf("PortRange(%d) = %d-%d", 1+i%7, s, e)
		}
		if s < firstPort || e > lastPort {
			t.Fatalf("range %d-%d outside %d-%d", s, e, firstPort, lastPort)
		}
		for _, o := range got {
			if s <= o.end && o.start <= e {
				t.Fatalf("range %d-%d overlaps %d-%d, still in use", s, e, o.start, o.end)
			}
		}
		got = append(got, span{s, e})
		AssertPortFree(t, s)
	}
}

// TestAnotherProcessGetsAnotherBlock runs this test binary again as a
// second test process: its ranges come from a block of its own.
func TestAnotherProcessGetsAnotherBlock(t *testing.T) {
	if os.Getenv("BERTH_PORTS_CHILD") == "1" {
		s, _ := PortRange(t, 3)
		os.Stdout.WriteString("range-start " + strconv.Itoa(s) + "\n")
		return
	}
	PortRange(t, 3) // this process holds its block from here on
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestAnotherProcessGetsAnotherBlock$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "BERTH_PORTS_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the second process: %v\n%s", err, out)
	}
	var theirs int
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "range-start "); ok {
			theirs, _ = strconv.Atoi(v)
		}
	}
	if theirs == 0 {
		t.Fatalf("the second process printed no range:\n%s", out)
	}
	if theirs >= ranges.start && theirs < ranges.start+blockSize {
		t.Fatalf("the second process got a range at %d, in this process's block (%d-%d)", theirs, ranges.start, ranges.start+blockSize-1)
	}
}
