package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// The peer: mcp-remote, the Node bridge from stdio to an HTTP MCP server.
const (
	peerName    = "mcp-remote"
	peerVersion = "0.15.1"
)

// peerDir is where the bench installs its Node peers (never in the repository).
func peerDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache dir for the Node peers (set XDG_CACHE_HOME): %w", err)
	}
	return filepath.Join(cache, "berth", "bench-node"), nil
}

// installPeer installs mcp-remote with npm into the cache on first use and
// returns the command that runs it (before the URL argument).
func installPeer(ctx context.Context, progress io.Writer) ([]string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("node is not installed (install Node.js 18+, or pass --no-peer)")
	}
	dir, err := peerDir()
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "node_modules", "mcp-remote", "dist", "proxy.js")
	if _, err := os.Stat(filepath.Join(dir, "installed-"+peerVersion)); err == nil {
		return []string{node, script}, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, fmt.Errorf("npm is not installed (install Node.js with npm, or pass --no-peer)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "installing %s@%s with npm into %s (first run only)...\n", peerName, peerVersion, dir)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", peerName+"@"+peerVersion)
	cmd.Stdout, cmd.Stderr = progress, progress
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("npm install %s: %w (check the network, or pass --no-peer)", peerName, err)
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("npm installed %s but %s is missing: %w", peerName, script, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "installed-"+peerVersion), nil, 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "installed %s@%s\n", peerName, peerVersion)
	return []string{node, script}, nil
}
