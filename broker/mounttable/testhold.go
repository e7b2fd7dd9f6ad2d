//go:build berthtest

package mounttable

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// In binaries built with the tag berthtest (the system tests build theirs
// so, see brokertest), BERTH_TEST_HOLD_DIR (brokertest.HoldEnv) names a
// folder: every mount then offers a tool berth_test_hold {"name": N} that
// returns once the file N exists in that folder. A test holds a tool call
// in flight for exactly as long as it needs (a busy session), without
// guessing at durations. The tool writes N.started in the folder when it
// starts, and N.cancelled when its context ends first, so that a test sees
// the call run and its cancellation. Berth's own builds have no such tool
// (testhold_off.go).

// addTestHold adds berth_test_hold to srv when BERTH_TEST_HOLD_DIR is set.
func addTestHold(srv *mcp.Server) {
	dir := os.Getenv("BERTH_TEST_HOLD_DIR")
	if dir == "" {
		return
	}
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "berth_test_hold", Description: "tests only: returns once the file name exists in BERTH_TEST_HOLD_DIR"},
		func(ctx context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, struct{}, error) {
			file := filepath.Join(dir, filepath.Base(a.Name))
			_ = os.WriteFile(file+".started", nil, 0o600)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				if _, err := os.Stat(file); err == nil {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, struct{}{}, nil
				}
				select {
				case <-ctx.Done():
					_ = os.WriteFile(file+".cancelled", nil, 0o600)
					return nil, struct{}{}, ctx.Err()
				case <-tick.C:
				}
			}
		})
}
