package finder

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestViewBuiltDuringAChangeIsNotCurrent: a change told while the
// finder's own goroutine is listing the tools (a hosted server's tools
// installed just after that listing began) is in the next find_tools,
// which waits for a build that began after it rather than taking the view
// being built.
func TestViewBuiltDuringAChangeIsNotCurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var served atomic.Value // []*mcp.Tool the server offers now
	served.Store([]*mcp.Tool{{Name: "search_standards", Description: "search the standards"}})
	listing := make(chan struct{}, 10) // a build began listing
	release := make(chan struct{})     // let the blocked listing answer
	var block atomic.Bool
	f := New(Options{Config: func() config.Config { return config.Config{} }, Tools: func(ctx context.Context) ([]*mcp.Tool, error) {
		tools := served.Load().([]*mcp.Tool)
		listing <- struct{}{}
		if block.Load() {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return tools, nil
	}})
	defer f.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before Close: the loop's build may be held
	if _, err := f.Find(ctx, "standards", 3); err != nil {
		t.Fatal(err)
	}
	<-listing

	// The new tool is installed and told; the finder's goroutine begins a
	// build that lists it and is held there.
	served.Store([]*mcp.Tool{{Name: "search_standards", Description: "search the standards"},
		{Name: "workspace__merge_pull_request", Description: "merge a pull request"}})
	block.Store(true)
	f.Changed()
	select {
	case <-listing:
	case <-ctx.Done():
		t.Fatal("the finder did not build again after Changed")
	}

	// A find_tools now must wait for that build, not answer the old view.
	found := make(chan *FindResult, 1)
	go func() {
		fr, err := f.Find(ctx, "merge a pull request", 3)
		if err != nil {
			t.Error(err)
		}
		found <- fr
	}()
	var fr *FindResult
	select {
	case fr = <-found: // answered while the build was held: the old view
	case <-time.After(200 * time.Millisecond):
		unblock()
		select {
		case fr = <-found:
		case <-ctx.Done():
			t.Fatal("find_tools did not answer")
		}
	}
	if fr == nil || len(fr.Tools) == 0 || fr.Tools[0].Name != "workspace__merge_pull_request" {
		t.Fatalf("find_tools after the change: %+v, want workspace__merge_pull_request first", fr)
	}
}
