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
// servers under a header: one waiting for approval with the command that approves it and
// every value its approval covers, and after the approval the same server
// running with its pid, tools and the file that declares it; a project server named like one of the
// broker's config is shown shadowed, its values escaped (a control
// character or a bidirectional override in an argument is shown, never
// acted on).
func TestDashboardShowsHostedServers(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	bctx := browser(t, ctx)
	ctl, _ := brokertest.PortRange(t, 1)
	home := brokertest.Home(t)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("servers:\n  clash: {command: /bin/true, enabled: false}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := brokertest.StartBroker(t, brokertest.Options{Home: home, Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl)}})
	root, script := memoryProject(t, "cards", filepath.Join(t.TempDir(), "graph.jsonl"))
	cfg := filepath.Join(root, api.ProjectDir, "config.yaml")
	raw, _ := os.ReadFile(cfg)
	clash := fmt.Sprintf("  clash:\n    command: sh\n    args: [-c, 'exit 0', %q]\n", hiddenText)
	if err := os.WriteFile(cfg, append(raw, clash...), 0o644); err != nil {
		t.Fatal(err)
	}
	p := b.Attach(t, root)

	row := fmt.Sprintf(`#projects article[data-id=%q] tr[data-server="memory"]`, p.ID)
	err := chromedp.Do(bctx,
		chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/", ctl)),
		chromedp.WaitVisible(chromedp.CSS(row)),
	)
	if err != nil {
		t.Fatalf("load the dashboard: %v", err)
	}
	text := pageText(t, bctx, chromedp.CSS(row))
	for _, want := range []string{"memory", "needs approval", "berth servers approve " + root, "0 tools"} {
		if !strings.Contains(text, want) {
			t.Errorf("the waiting server's row lacks %q:\n%s", want, text)
		}
	}
	card := fmt.Sprintf(`#projects article[data-id=%q] `, p.ID)
	def := pageText(t, bctx, chromedp.CSS(card+`tr[data-definition="memory"]`))
	for _, want := range []string{"what memory runs", "command", "runs ", script, "MEMORY_FILE_PATH=", "roots", root} {
		if !strings.Contains(def, want) {
			t.Errorf("the waiting server's definition lacks %q:\n%s", want, def)
		}
	}
	shadowed := pageText(t, bctx, chromedp.CSS(card+`tr[data-server="clash"][data-origin="project"]`))
	if !strings.Contains(shadowed, "shadowed") || !strings.Contains(shadowed, `the broker's config declares a server "clash" too`) {
		t.Errorf("the clashing server's row:\n%s", shadowed)
	}
	def = pageText(t, bctx, chromedp.CSS(card+`tr[data-definition="clash"]`))
	if !strings.Contains(def, `\u001b[8mfetch: npx -y mcp-server-fetch\u001b[0m \u202egnp.exe`) || !strings.Contains(def, `\u000d`) {
		t.Errorf("the clashing server's definition does not show its argument escaped:\n%q", def)
	}
	noRawControl(t, "the dashboard's definition", def)
	declared := `(() => { const l = document.querySelector("#logs"); return !!l && l.textContent.includes("declared twice"); })()`
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](declared, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the broker log panel never showed the clash: %v", err)
	}
	logs := pageText(t, bctx, chromedp.CSS("#logs"))
	noRawControl(t, "the dashboard's broker log", logs)
	if !strings.Contains(logs, `\u202egnp.exe`) {
		t.Errorf("the broker log panel does not show the clash's argument escaped:\n%s", logs)
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
	text = pageText(t, bctx, chromedp.CSS(row))
	for _, want := range []string{"9 tools", "1 · 0", "0 restarts", "MiB", "in " + filepath.Join(root, api.ProjectDir, "config.yaml")} {
		if !strings.Contains(text, want) {
			t.Errorf("the running server's row lacks %q:\n%s", want, text)
		}
	}
	head := pageText(t, bctx, chromedp.CSS(fmt.Sprintf(`#projects article[data-id=%q] table.servers thead`, p.ID)))
	for _, want := range []string{"Server", "State", "Tools", "Calls · errors", "Restarts", "Memory"} {
		if !strings.Contains(head, want) {
			t.Errorf("the servers table's header lacks %q: %q", want, head)
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
