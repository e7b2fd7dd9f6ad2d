// Package nodetest finds Node.js for tests that run a TypeScript MCP SDK
// client, and installs a client folder's locked npm packages when they are
// missing.
package nodetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Node returns the node binary, first installing the packages locked in
// dir (package.json and package-lock.json) with `npm ci` when
// dir/node_modules lacks the TypeScript MCP SDK. Without Node it skips the
// test, except under CI (BERTH_CI set), where it fails; a failed install
// fails the test.
func Node(tb testing.TB, dir string) string {
	tb.Helper()
	fix := "install Node.js 20+ with npm, or run `npm ci --prefix " + dir + "`"
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("BERTH_CI") == "" {
			tb.Skip("node is not installed: " + fix)
		}
		tb.Fatal("node is not installed: " + fix)
	}
	sdk := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(sdk); err == nil {
		return node
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		tb.Fatalf("the TypeScript MCP SDK is not installed and npm is absent: %s", fix)
	}
	tb.Logf("installing the TypeScript MCP SDK: npm ci --prefix %s", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--prefix", dir).CombinedOutput()
	if err != nil {
		tb.Fatalf("npm ci --prefix %s: %v\n%s", dir, err, out)
	}
	if _, err := os.Stat(sdk); err != nil {
		tb.Fatalf("npm ci did not install the SDK (%v)\n%s", err, out)
	}
	return node
}
