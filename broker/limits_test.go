package broker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatedServer is an MCP server whose "wait" tool blocks until release is
// closed and reports each call's start on started.
func gatedServer(t *testing.T, l *limits, kind serverKind) (s *mcp.Server, started chan struct{}, release chan struct{}) {
	t.Helper()
	s = mcp.NewServer(&mcp.Implementation{Name: "gated", Version: "1"}, nil)
	started, release = make(chan struct{}, 64), make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "quick"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{}, struct{}{}, nil
	})
	s.AddReceivingMiddleware(l.middleware(kind))
	return s, started, release
}

func connectInMemory(t *testing.T, ctx context.Context, s *mcp.Server) (*mcp.ClientSession, error) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func busyCode(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == CodeBusy
}

func TestToolCallsPastTheLimitAreRefusedOnTheOpenSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	busy := newLimits("busy", 0, 2, 0)
	s, started, release := gatedServer(t, busy, kindStream)
	cs, err := connectInMemory(t, ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait"}); err != nil {
				t.Errorf("call within the limit: %v", err)
			}
		}()
	}
	<-started
	<-started
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"})
	if !busyCode(err) {
		t.Fatalf("third concurrent call: %v, want JSON-RPC error %d", err, CodeBusy)
	}

	// Another project's limits are its own.
	other, _, _ := gatedServer(t, newLimits("other", 0, 2, 0), kindStream)
	ocs, err := connectInMemory(t, ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
		t.Fatalf("another project while this one is full: %v", err)
	}

	close(release)
	wg.Wait()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
		t.Fatalf("the same session after the calls ended: %v", err)
	}
}

func TestSessionsPastTheLimitAreRefusedAtInitialize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := newLimits("capped", 2, 0, 0)
	s, _, _ := gatedServer(t, l, kindStream)
	first, err := connectInMemory(t, ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectInMemory(t, ctx, s); err != nil {
		t.Fatal(err)
	}
	if !l.full() {
		t.Fatal("two sessions of two do not fill the project")
	}
	if _, err := connectInMemory(t, ctx, s); !busyCode(err) {
		t.Fatalf("third session: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	// IDE sessions (not network) are never refused.
	ide, _, _ := gatedServer(t, l, kindIDE)
	if _, err := connectInMemory(t, ctx, ide); err != nil {
		t.Fatalf("IDE session refused: %v", err)
	}
	// A closed session frees its place (released when the server sees the end).
	first.Close()
	deadline := time.Now().Add(10 * time.Second)
	for l.full() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := connectInMemory(t, ctx, s); err != nil {
		t.Fatalf("session after one closed: %v", err)
	}
}

func TestIdleSessionsAreClosedButBusyOnesAreNot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := newLimits("idle", 0, 0, 150*time.Millisecond)
	s, started, release := gatedServer(t, l, kindStream)
	go l.closeIdle(ctx, s)

	busy, err := connectInMemory(t, ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := connectInMemory(t, ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := busy.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
		done <- err
	}()
	<-started
	waitErr := make(chan error, 1)
	go func() { waitErr <- idle.Wait() }()
	select {
	case <-waitErr: // the server closed the idle session
	case <-time.After(10 * time.Second):
		t.Fatal("idle session still open 10s past a 150ms session_timeout")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the call that outlived session_timeout: %v", err)
	}
}
