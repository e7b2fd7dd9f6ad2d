package hosted

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLogMessagesReachEveryHolder: a share: user server's
// notifications/message reaches the OnLog of every project holding it,
// under the server's name, and no longer one that let it go.
func TestLogMessagesReachEveryHolder(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	pool := newPool(t, testOptions())
	d := fakeDecl(t, "fake")
	d.Server.Share = config.ShareUser
	var mu sync.Mutex
	got := map[string][]string{}
	open := func(id string) *Project {
		root := filepath.Join(t.TempDir(), id)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		hp, err := pool.Open(ctx, ProjectSpec{ID: id, Name: id, Root: root, OnLog: func(server string, msg *mcp.LoggingMessageParams) {
			mu.Lock()
			defer mu.Unlock()
			got[id] = append(got[id], server+" "+string(msg.Level)+" "+msg.Logger+" "+msg.Data.(string))
		}}, []Decl{d})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hp.Close(context.Background()) })
		return hp
	}
	a, b := open("a"), open("b")
	sa := connect(t, a, sessionOpts{})
	toolNames(t, ctx, sa)
	wait := func(id string, n int) []string {
		t.Helper()
		var lines []string
		brokertest.Poll(brokertest.WaitLimit, func() bool {
			mu.Lock()
			lines = append([]string(nil), got[id]...)
			mu.Unlock()
			return len(lines) >= n
		})
		return lines
	}
	sa.call(t, ctx, "fake__log", map[string]any{"text": "one"})
	for _, id := range []string{"a", "b"} {
		if lines := wait(id, 1); len(lines) != 1 || lines[0] != "fake warning fakelog one" {
			t.Errorf("project %s relayed %q; want the one message under the server's name", id, lines)
		}
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sb := connect(t, b, sessionOpts{})
	sb.call(t, ctx, "fake__log", map[string]any{"text": "two"})
	if lines := wait("b", 2); len(lines) != 2 || lines[1] != "fake warning fakelog two" {
		t.Errorf("project b relayed %q after a let go", lines)
	}
	if lines := wait("a", 1); len(lines) != 1 {
		t.Errorf("project a, closed, still got %q", lines)
	}
}
