package systest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// 200 projects mounted in one broker all watch their files, through one
// inotify instance (a user gets 128 by default): an edit in the last one
// mounted is found by its search.
func TestTwoHundredProjectsAllWatched(t *testing.T) {
	// Heavy: it mounts 200 projects, each indexed as it attaches. (One of
	// its attaches once went 30 s without an answer beside other tests: the
	// engine's own tool listing blocked on a tools/list_changed, fixed in
	// project/toollist.go.)
	t.Parallel()
	heavy(t)
	const n = 200
	b := brokertest.StartBroker(t, brokertest.Options{Ports: n + 10})
	ctx := testCtx(t, 5*time.Minute)
	var roots []string
	for i := range n {
		root := brokertest.Project(t, fmt.Sprintf("many%03d", i), map[string]string{
			".praxis-os/standards/a.md": fmt.Sprintf("# Project %d\n\nIts own standard.\n", i),
		})
		b.Attach(t, root)
		roots = append(roots, root)
	}
	for _, root := range roots {
		p, err := b.Client.Project(ctx, api.ProjectID(root))
		if err != nil {
			t.Fatal(err)
		}
		if p.Detail["watching"] != true {
			t.Fatalf("project %s mounted without file watching: %v", p.Name, p.Detail["watching"])
		}
	}
	if runtime.GOOS == "linux" {
		if got := inotifyFDs(t, b.PID()); got != 1 {
			t.Errorf("the broker holds %d inotify instances for %d projects, want 1", got, n)
		}
	}
	last := roots[n-1]
	resp := b.Attach(t, last)
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: resp.URL})
	if err := os.WriteFile(filepath.Join(last, ".praxis-os/standards/new.md"), []byte("# Zeppelin mooring\n\nRopes and masts.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, "the edit in the last project is searchable", func() bool {
		return hasFile(search(t, ctx, s, "zeppelin mooring"), ".praxis-os/standards/new.md")
	})
}

// inotifyFDs counts the inotify file descriptors of process pid.
func inotifyFDs(t *testing.T, pid int) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}
