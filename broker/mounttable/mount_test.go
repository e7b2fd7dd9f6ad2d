package mounttable

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/mcpserve"
	"github.com/berth-dev/berth/broker/memtrim"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testMount mounts a small real project on a loopback port; trim, when
// set, is asked to trim once its index is built.
func testMount(tb testing.TB, ctx context.Context, trim *memtrim.Trimmer) *Mount {
	tb.Helper()
	root := tb.TempDir()
	std := filepath.Join(root, api.ProjectDir, "standards")
	if err := os.MkdirAll(std, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(std, "errors.md"), []byte("# Errors\n\nWrap errors with context.\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	db, err := store.Open(filepath.Join(tb.TempDir(), api.DBName), time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	eng, err := project.Open(ctx, project.Options{Root: root, ID: "bench", DB: db, Logger: log,
		Transports: mcpserve.TransportNames(), TransportOf: mcpserve.TransportName, Schemas: mcp.NewSchemaCache()})
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return newMount(ctx, eng, "bench", ln, nil, mountDeps{log: log, db: db, sessionTimeout: time.Hour, onCall: func(*Mount, api.ToolCall) {}, trim: trim})
}

// The goroutine that waits for a mount's first index catch-up (then asks
// for a trim of the broker's memory) is the mount's: its shutdown ends it
// and waits for it, whether the index was built (the goroutine returned
// by itself) or never is (the shutdown cancels the wait). The package's
// TestMain fails on any goroutine left behind.
func TestShutdownWaitsForTheTrimGoroutine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	trim := memtrim.New(ctx, time.Second)

	built := testMount(t, ctx, trim)
	waitCtx, waitDone := context.WithTimeout(ctx, 10*time.Second)
	defer waitDone()
	if err := built.engine.WaitIndexReady(waitCtx); err != nil {
		t.Fatalf("index of a one-file project not ready: %v", err)
	}

	// An index that is never built: the wait lasts until it is stopped.
	never := testMount(t, ctx, trim)
	never.stopTrim()
	<-never.trimDone
	trimmed := false
	never.stopTrim, never.trimDone = afterReady(ctx, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}, func() { trimmed = true })

	for name, m := range map[string]*Mount{"index built": built, "index never built": never} {
		m.shutdown(context.Background())
		select {
		case <-m.trimDone:
		default:
			t.Errorf("%s: shutdown returned with the trim goroutine still running", name)
		}
	}
	if trimmed {
		t.Error("a trim was asked for an index never built")
	}
}
