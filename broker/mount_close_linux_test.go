package broker

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// goroutineIn is the stack of a goroutine whose stack holds fn, "" when
// none does.
func goroutineIn(fn string) string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for len(buf) == n {
		buf = make([]byte, 2*len(buf))
		n = runtime.Stack(buf, true)
	}
	for g := range bytes.SplitSeq(buf[:n], []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			return string(g)
		}
	}
	return ""
}

// waitGoroutine waits up to brokertest.WaitLimit for a goroutine whose stack holds fn and
// also holds one of at, and returns its stack.
func waitGoroutine(t *testing.T, fn string, at ...string) string {
	t.Helper()
	var g string
	found := brokertest.Poll(brokertest.WaitLimit, func() bool {
		g = goroutineIn(fn)
		for _, a := range at {
			if g != "" && bytes.Contains([]byte(g), []byte(a)) {
				return true
			}
		}
		return false
	})
	if !found {
		t.Fatalf("no goroutine in %s at %v; last seen:\n%s", fn, at, g)
	}
	return g
}

// A mount's close waits for its session sweep to return before it saves
// the sessions a last time: a sweep in the middle of a save (held here on
// the store's lock) is waited for, never raced.
func TestMountCloseWaitsForItsSweep(t *testing.T) {
	ctx := context.Background()
	m := benchMount(t, ctx)
	m.saved.mu.Lock()
	waitGoroutine(t, "(*limits).sweep(", "(*sessionStore).touch(") // its next tick (every second) waits for the lock
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		m.close(ctx)
	}()
	g := waitGoroutine(t, "(*mount).close(", "[chan receive", "(*sessionStore).touch(")
	m.saved.mu.Unlock()
	if bytes.Contains([]byte(g), []byte("(*sessionStore).touch(")) {
		t.Errorf("close saved the sessions while the sweep was still saving:\n%s", g)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("close did not return once the sweep could finish")
	}
	if g := goroutineIn("(*limits).sweep("); g != "" {
		t.Fatalf("a sweep runs after close:\n%s", g)
	}
}
