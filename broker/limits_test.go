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
// closed and reports each call's start on started. Its sessions are
// tagged with their transport, as a mount's are.
func gatedServer(t *testing.T, l *limits) (s *mcp.Server, tags *sessionTags, started chan struct{}, release chan struct{}) {
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
	tags = newSessionTags()
	s.AddReceivingMiddleware(l.middleware, tags.middleware)
	return s, tags, started, release
}

// connectInMemory connects a client to s as a session of the transport named.
func connectInMemory(t *testing.T, ctx context.Context, s *mcp.Server, name string) (*mcp.ClientSession, error) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(withTransport(ctx, named(t, name)), st, nil)
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
	s, _, started, release := gatedServer(t, busy)
	cs, err := connectInMemory(t, ctx, s, transportSSE)
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
	other, _, _, _ := gatedServer(t, newLimits("other", 0, 2, 0))
	ocs, err := connectInMemory(t, ctx, other, transportSSE)
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

// TestSessionsPastTheLimitAreRefusedAtInitialize uses stream sessions:
// the go-sdk client opens an in-memory session with server/discover, which
// takes a place on a stream (on /mcp it would get a throwaway session).
func TestSessionsPastTheLimitAreRefusedAtInitialize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := newLimits("capped", 2, 0, 0)
	s, _, _, _ := gatedServer(t, l)
	first, err := connectInMemory(t, ctx, s, transportSSE)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectInMemory(t, ctx, s, transportWS); err != nil {
		t.Fatal(err)
	}
	if !l.full() {
		t.Fatal("two sessions of two do not fill the project")
	}
	if _, err := connectInMemory(t, ctx, s, transportSSE); !busyCode(err) {
		t.Fatalf("third session: %v, want JSON-RPC error %d", err, CodeBusy)
	}
	// IDE sessions (not network) are never refused.
	if _, err := connectInMemory(t, ctx, s, transportStdio); err != nil {
		t.Fatalf("IDE session refused: %v", err)
	}
	// A closed session frees its place (released when the server sees the end).
	first.Close()
	deadline := time.Now().Add(10 * time.Second)
	for l.full() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := connectInMemory(t, ctx, s, transportSSE); err != nil {
		t.Fatalf("session after one closed: %v", err)
	}
}

func TestIdleSessionsAreClosedButBusyOnesAreNot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := newLimits("idle", 0, 0, 150*time.Millisecond)
	s, tags, started, release := gatedServer(t, l)
	go l.closeIdle(ctx, s, tags)

	busy, err := connectInMemory(t, ctx, s, transportWS)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := connectInMemory(t, ctx, s, transportSSE)
	if err != nil {
		t.Fatal(err)
	}
	// Sessions of the other transports are not the broker's to time out.
	ide, err := connectInMemory(t, ctx, s, transportStdio)
	if err != nil {
		t.Fatal(err)
	}
	streamable, err := connectInMemory(t, ctx, s, transportHTTP)
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
	for name, cs := range map[string]*mcp.ClientSession{"stdio": ide, "http": streamable} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "quick"}); err != nil {
			t.Errorf("the %s session, as idle as the closed one: %v", name, err)
		}
	}
}

// named is the transport called name.
func named(t *testing.T, name string) *transport {
	t.Helper()
	for _, tr := range transports {
		if tr.name == name {
			return tr
		}
	}
	t.Fatalf("no transport %s", name)
	return nil
}
