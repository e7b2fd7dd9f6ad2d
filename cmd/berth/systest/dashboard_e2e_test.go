package systest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/brokertest/ci"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var shopStandards = map[string]string{
	".praxis-os/standards/errors.md":  "# Errors\n\n## Wrapping\n\nWrap every error with context so the caller knows what failed.\n\n## Closing files\n\nClose what you open with defer.\n",
	".praxis-os/standards/testing.md": "# Testing\n\n## Real processes\n\nTests start the real broker and talk MCP to it.\n",
}

var ledgerStandards = map[string]string{
	".praxis-os/standards/money.md": "# Money\n\n## Ledger balance\n\nA ledger balance is the sum of its entries; never store it twice.\n\n## Rounding\n\nRound half to even, at the end only.\n",
	// praxis-os's default groups: browser is not served, a warning.
	".praxis-os/config.json": `{"mcp": {"enabled_tool_groups": ["rag", "workflow", "browser"]}}`,
}

// chromium finds the browser, or fails (under CI) or skips (elsewhere)
// saying how to install it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	ci.Unavailable(t, "Chromium is not installed: run apt-get install chromium (as root; .ci/run does this)")
	return ""
}

// artifactPath is where the test leaves a file for people to look at.
func artifactPath(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("BERTH_ARTIFACTS")
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// browser opens a tab for the test in the test process's one headless
// Chromium (sharedBrowser), in a browser context of its own: no cookie,
// storage or cache of another test reaches it. The tab closes, and its
// browser context is disposed of, when the test ends or ctx is done.
func browser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	shared, err := chromiumOnce.start(chromium(t))
	if err != nil {
		t.Fatal(err)
	}
	tab, cancelTab := chromedp.NewContext(shared, chromedp.WithNewBrowserContext())
	stop := context.AfterFunc(ctx, cancelTab)
	t.Cleanup(func() { stop(); cancelTab() })
	return tab
}

func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	bctx := browser(t, ctx)
	ctl, _ := brokertest.PortRange(t, 1)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl)}})
	shopRoot := brokertest.Project(t, "shop", shopStandards)
	writeWorkflows(t, shopRoot)
	shop := b.Attach(t, shopRoot)
	ledgerRoot := brokertest.Project(t, "ledger", ledgerStandards)
	ledger := b.Attach(t, ledgerRoot)
	// A project whose config has a misspelt key is refused, and listed.
	badRoot := brokertest.Project(t, "broken", map[string]string{".praxis-os/config.yaml": "mcp:\n  http_prot: 4300\n"})
	if _, err := b.Client.Attach(ctx, api.AttachRequest{Root: badRoot, Kind: api.HolderCLI}); !errors.Is(err, api.CodeBadConfig) {
		t.Fatalf("attach of a project with a bad config: %v, want code %s", err, api.CodeBadConfig)
	}

	// A tool call on each project, one of them failing, before the page opens.
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: shop.URL})
	search(t, ctx, s, "closing files")
	if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "search_standards", Arguments: map[string]any{"query": ""}}); err != nil || !res.IsError {
		t.Fatalf("empty query: %v %+v", err, res)
	}
	callOK(t, ctx, s, "start_workflow", map[string]any{"workflow_type": "bug_fix_v1", "target_file": "src/cart.go"})
	l := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: ledger.URL})
	search(t, ctx, l, "rounding")
	// An IDE's session on ledger, through the shim.
	tr, _ := shimTransport(t, b.Home, ledgerRoot)
	connectMCP(t, ctx, tr)

	base := fmt.Sprintf("http://127.0.0.1:%d/", ctl)
	card := func(id string) chromedp.CSS { return chromedp.CSS(fmt.Sprintf(`#projects article[data-id=%q]`, id)) }
	text := func(sel chromedp.CSS) string { t.Helper(); return pageText(t, bctx, sel) }
	err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base),
		chromedp.WaitVisible(card(shop.ID)),
		chromedp.WaitVisible(card(ledger.ID)),
		chromedp.WaitVisible(chromedp.CSS(`#live.on`)),
	)
	if err != nil {
		t.Fatalf("load the dashboard: %v", err)
	}
	projects, shopCard, ledgerCard := text(`#projects`), text(card(shop.ID)), text(card(ledger.ID))
	for _, want := range []string{"shop", "ledger", shop.URL, ledger.URL, fmt.Sprintf(":%d", shop.Port), fmt.Sprintf(":%d", ledger.Port), shop.ID, ledger.ID} {
		if !strings.Contains(projects, want) {
			t.Errorf("the projects list lacks %q:\n%s", want, projects)
		}
	}
	for _, want := range []string{"search_standards", "start_workflow", "error", "query is empty", "ready", "1 session", "active", "bug_fix_v1", "http 1", "transport http"} {
		if !strings.Contains(shopCard, want) {
			t.Errorf("shop's card lacks %q:\n%s", want, shopCard)
		}
	}
	// Headings are shown in capitals: compared in lower case.
	for _, want := range []string{"mcp sessions", "2 live, 0 idle", "berth-test 1", "stdio\tlive"} {
		if !strings.Contains(strings.ToLower(ledgerCard), want) {
			t.Errorf("ledger's card lacks %q:\n%s", want, ledgerCard)
		}
	}
	for _, want := range []string{"stdio 1", "http 1", "1 file", "search_standards", "transport dual",
		`mcp.enabled_tool_groups: "browser" is praxis-os's browser tools (Playwright), which Berth does not serve`} {
		if !strings.Contains(ledgerCard, want) {
			t.Errorf("ledger's card lacks %q:\n%s", want, ledgerCard)
		}
	}
	refused := text(`#refused`)
	for _, want := range []string{"Not served", badRoot, "bad_config", `config.yaml:2:3: unknown key "mcp.http_prot": did you mean "mcp.http_port"?`} {
		if !strings.Contains(refused, want) {
			t.Errorf("the refused list lacks %q:\n%s", want, refused)
		}
	}

	// The page follows the broker without reloading: a new call shows up.
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info"}); err != nil {
		t.Fatal(err)
	}
	poll := fmt.Sprintf(`document.querySelector(%q).textContent.includes("get_server_info")`, string(card(shop.ID)))
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](poll, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("a tool call made after the page loaded never appeared: %v", err)
	}

	// Search the ledger project by typing into the search box.
	err = chromedp.Do(bctx,
		chromedp.SetValue(chromedp.CSS(`#search-project`), ledger.ID),
		chromedp.SendKeys(chromedp.CSS(`#search-q`), "ledger balance"),
		chromedp.Click(chromedp.CSS(`#search button`)),
		chromedp.WaitVisible(chromedp.CSS(`#search-results li`)),
	)
	if err != nil {
		t.Fatalf("search from the dashboard: %v", err)
	}
	results, status := text(`#search-results`), text(`#search-status`)
	if !strings.Contains(results, "Money > Ledger balance") || !strings.Contains(results, ".praxis-os/standards/money.md") {
		t.Errorf("search results lack the ledger section:\n%s", results)
	}
	if strings.Contains(results, "errors.md") {
		t.Errorf("a search of ledger returned shop's file:\n%s", results)
	}
	if !strings.Contains(status, "matching section") {
		t.Errorf("search status %q", status)
	}

	for _, shot := range []struct {
		name          string
		width, height int64
		scheme        string
	}{{"berth-dashboard.png", 1280, 900, "light"}, {"berth-dashboard-narrow.png", 420, 900, "light"}, {"berth-dashboard-dark.png", 1280, 900, "dark"}} {
		if err := chromedp.Do(bctx, colorScheme(shot.scheme), chromedp.EmulateViewport(shot.width, shot.height), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		p := artifactPath(t, shot.name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("dashboard screenshot (%dpx wide, %s): %s", shot.width, shot.scheme, p)
	}
}

// pageText is the text of the element sel selects on the browser's page.
func pageText(t *testing.T, bctx context.Context, sel chromedp.CSS) string {
	t.Helper()
	// Found and read in one step in the page, once there: the dashboard
	// draws its cards again at every snapshot, so a node found by one
	// DevTools call may be gone by the next.
	read := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? {text: e.innerText} : null; })()`, string(sel))
	got, err := chromedp.Run(bctx, chromedp.Poll[struct{ Text string }](read, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return got.Text
}

// TestDashboardEndsASession clicks "end" beside the sub-agent's session of
// a project: the row goes, the session's next request fails, and the IDE's
// session of the same project carries on.
func TestDashboardEndsASession(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	bctx := browser(t, ctx)
	ctl, _ := brokertest.PortRange(t, 1)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl)}})
	root := brokertest.Project(t, "ended", nil)
	p := b.Attach(t, root)
	sid := rawInitialize(t, ctx, p.URL)
	tr, _ := shimTransport(t, b.Home, root)
	ide := connectMCP(t, ctx, tr)
	row := chromedp.CSS(fmt.Sprintf(`#projects article[data-id=%q] tr[data-session=%q]`, p.ID, sid))
	if err := chromedp.Do(bctx, chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/", ctl))); err != nil {
		t.Fatal(err)
	}
	// The page draws its project cards again at every snapshot the broker
	// sends, so a button found by one DevTools call may be gone by the
	// next: the button is found and clicked in one step, in the page, as a
	// person's click is.
	click := fmt.Sprintf(`(() => { const b = document.querySelector(%q); if (!b || b.offsetParent === null) return false; b.click(); return true; })()`,
		string(row)+" button.end")
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](click, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("end a session from the dashboard: %v", err)
	}
	gone := fmt.Sprintf(`document.querySelector(%q) === null`, string(row))
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](gone, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the ended session's row stayed: %v", err)
	}
	if status, _ := callServerInfo(t, ctx, p.URL, sid); status != http.StatusNotFound {
		t.Fatalf("the ended session's next request: %d, want 404", status)
	}
	getServerInfo(t, ctx, ide)
}

// colorScheme makes the page see prefers-color-scheme as scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return chromedp.Void{}, err
	}
}
