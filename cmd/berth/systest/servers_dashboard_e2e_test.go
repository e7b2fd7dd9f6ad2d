package systest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDashboardShowsHostedServers: a project's card lists its hosted
// servers: one waiting for approval with the command that approves it,
// and after the approval the same server running with its pid and tools.
func TestDashboardShowsHostedServers(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	bctx := browser(t, ctx)
	ctl, _ := brokertest.PortRange(t, 1)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl)}})
	root, _ := memoryProject(t, "cards", filepath.Join(t.TempDir(), "graph.jsonl"))
	p := b.Attach(t, root)

	row := fmt.Sprintf(`#projects article[data-id=%q] tr[data-server="memory"]`, p.ID)
	err := chromedp.Do(bctx,
		chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/", ctl)),
		chromedp.WaitVisible(chromedp.CSS(row)),
	)
	if err != nil {
		t.Fatalf("load the dashboard: %v", err)
	}
	text, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(row)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"memory", "needs approval", "berth servers approve " + root, "0 tools"} {
		if !strings.Contains(text, want) {
			t.Errorf("the waiting server's row lacks %q:\n%s", want, text)
		}
	}

	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: p.URL})
	callText(t, ctx, s, "memory__read_graph", map[string]any{})
	pid := serverStatus(t, ctx, b, root, "memory").PID
	running := fmt.Sprintf(`(() => { const r = document.querySelector(%q); return !!r && r.textContent.includes("running") && r.textContent.includes("pid %d"); })()`, row, pid)
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](running, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the card never showed memory running as pid %d: %v", pid, err)
	}
	text, err = chromedp.Run(bctx, chromedp.Text(chromedp.CSS(row)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"9 tools", "1 · 0", "0 restarts", "MiB"} {
		if !strings.Contains(text, want) {
			t.Errorf("the running server's row lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "approve") {
		t.Errorf("the approved server's row still asks for approval:\n%s", text)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := artifactPath(t, "berth-dashboard-servers.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("dashboard screenshot: %s", shot)
}
