package project

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGitCacheSharesOneReadPerTTL(t *testing.T) {
	var reads atomic.Int32
	now := time.Unix(1000, 0)
	var clock sync.Mutex
	c := newGitCache()
	c.now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	c.read = func(context.Context, string) *GitInfo {
		n := reads.Add(1)
		return &GitInfo{Commit: string(rune('a' + n - 1))}
	}
	ctx := context.Background()

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g := c.get(ctx, "/p"); g == nil || g.Commit != "a" {
				t.Errorf("concurrent get = %+v, want the first read", g)
			}
		}()
	}
	wg.Wait()
	if n := reads.Load(); n != 1 {
		t.Fatalf("20 concurrent calls ran %d reads, want 1", n)
	}

	clock.Lock()
	now = now.Add(gitTTL - time.Millisecond)
	clock.Unlock()
	if g := c.get(ctx, "/p"); g.Commit != "a" || reads.Load() != 1 {
		t.Errorf("within the TTL: %+v after %d reads", g, reads.Load())
	}
	clock.Lock()
	now = now.Add(time.Millisecond)
	clock.Unlock()
	if g := c.get(ctx, "/p"); g.Commit != "b" || reads.Load() != 2 {
		t.Errorf("after the TTL: %+v after %d reads, want a fresh read", g, reads.Load())
	}
}

func TestGitCacheKeepsNoCancelledRead(t *testing.T) {
	var reads atomic.Int32
	c := newGitCache()
	c.read = func(context.Context, string) *GitInfo { reads.Add(1); return nil }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.get(ctx, "/p")
	c.get(context.Background(), "/p")
	c.get(context.Background(), "/p")
	if n := reads.Load(); n != 2 {
		t.Errorf("reads = %d, want 2 (the cancelled one is not kept, the next is)", n)
	}
}
