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

	"github.com/berth-dev/berth/broker/brokertest/ci"
)

// npmServersDir holds the locked npm package of the real MCP servers the
// tests host (@modelcontextprotocol/server-memory, server-everything,
// server-filesystem), relative to the module root.
const npmServersDir = "broker/hosted/testdata/servers"

// NPMServer returns node and the entry script of an installed
// @modelcontextprotocol server (pkg: "server-memory", "server-everything"
// or "server-filesystem"), installing the locked packages first when they
// are missing (NodeModules).
func NPMServer(tb testing.TB, pkg string) (node, script string) {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(root, npmServersDir)
	module := filepath.Join("@modelcontextprotocol", pkg)
	node = NodeModules(tb, dir, module, "@modelcontextprotocol/"+pkg)
	script = filepath.Join(dir, "node_modules", module, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		tb.Fatalf("%s is not in %s: %v", pkg, npmServersDir, err)
	}
	return node, script
}

// installs runs `npm ci` at most once per folder in the test binary, so
// that parallel tests do not install the same folder together.
var installs sync.Map // folder -> *install

type install struct {
	once sync.Once
	out  []byte
	err  error
}

// NodeModules returns the node binary, or ends the test. Modules missing
// from dir (a package.json with its package-lock.json) are installed with
// `npm ci` (the locked versions); module is one of them, whose package.json
// says the install is done, and what names it in messages. Without Node.js
// the test is ci.Unavailable (skipped, or failed under BERTH_CI); a failed
// install fails it.
func NodeModules(tb testing.TB, dir, module, what string) string {
	tb.Helper()
	fix := "install Node.js 20+ with npm, or run `npm ci --prefix " + dir + "`"
	node, err := exec.LookPath("node")
	if err != nil {
		ci.Unavailable(tb, "node is not installed: %s", fix)
	}
	marker := filepath.Join(dir, "node_modules", module, "package.json")
	if _, err := os.Stat(marker); err == nil {
		return node
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	v, _ := installs.LoadOrStore(abs, &install{})
	in := v.(*install)
	in.once.Do(func() {
		npm, err := exec.LookPath("npm")
		if err != nil {
			in.err = fmt.Errorf("npm is absent: %w", err)
			return
		}
		tb.Logf("installing %s: npm ci --prefix %s", what, dir)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		in.out, in.err = exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--prefix", abs).CombinedOutput()
	})
	if in.err != nil {
		tb.Fatalf("install %s: npm ci --prefix %s: %v (%s)\n%s", what, dir, in.err, fix, in.out)
	}
	if _, err := os.Stat(marker); err != nil {
		tb.Fatalf("npm ci did not install %s (%v)\n%s", what, err, in.out)
	}
	return node
}

// moduleRoot is the directory of the go.mod of the tree under test.
var moduleRoot = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
})
