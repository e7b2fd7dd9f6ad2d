package brokertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// npmServersDir holds the locked npm package of the real MCP servers the
// tests host (@modelcontextprotocol/server-memory, server-everything,
// server-filesystem), relative to the module root.
const npmServersDir = "broker/hosted/testdata/servers"

var (
	npmOnce sync.Once
	npmDir  string
	npmErr  error
)

// NPMServer returns node and the entry script of an installed
// @modelcontextprotocol server (pkg: "server-memory", "server-everything"
// or "server-filesystem"), installing the locked packages with `npm ci` on
// first use. Without Node.js it skips, except under CI (BERTH_CI set),
// where it fails; a failed install fails.
func NPMServer(tb testing.TB, pkg string) (node, script string) {
	tb.Helper()
	const fix = "install Node.js 20+ with npm, or run `npm ci --prefix " + npmServersDir + "`"
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("BERTH_CI") == "" {
			tb.Skip("node is not installed: " + fix)
		}
		tb.Fatal("node is not installed: " + fix)
	}
	npmOnce.Do(func() { npmDir, npmErr = npmInstall() })
	if npmErr != nil {
		tb.Fatalf("%v: %s", npmErr, fix)
	}
	script = filepath.Join(npmDir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		tb.Fatalf("%s is not in %s: %v", pkg, npmServersDir, err)
	}
	return node, script
}

// npmInstall runs `npm ci` in the servers' folder unless both are there.
func npmInstall() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, npmServersDir)
	installed := true
	for _, pkg := range []string{"server-memory", "server-everything", "server-filesystem"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")); err != nil {
			installed = false
		}
	}
	if installed {
		return dir, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--prefix", dir).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("npm ci --prefix %s: %w\n%s", dir, err, out)
	}
	return dir, nil
}

// moduleRoot is the directory of the go.mod of the tree under test.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}
