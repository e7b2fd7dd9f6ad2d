package systest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/chromedp/chromedp"
)

// attackPage is served from another loopback port, as by a local dev
// server running a compromised dependency. It tries to attach a directory
// and to read and drive the broker, and records what happened.
const attackPage = `<!doctype html><title>dev server</title><script>
const ctl = %[1]q, body = JSON.stringify({root: %[2]q, kind: "cli"});
window.results = {};
(async () => {
  const r = window.results;
  try { await fetch(ctl + "/projects", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}); r.text = "sent"; } catch (e) { r.text = "blocked"; }
  try { await fetch(ctl + "/projects", {method: "POST", mode: "no-cors", body: new Blob([body])}); r.untyped = "sent"; } catch (e) { r.untyped = "blocked"; }
  try { const a = await fetch(ctl + "/projects", {method: "POST", headers: {"Content-Type": "application/json", "Berth-Client": "page"}, body}); r.json = "status " + a.status; } catch (e) { r.json = "blocked"; }
  try { const a = await fetch(ctl + "/projects"); r.read = "status " + a.status + " " + (await a.text()); } catch (e) { r.read = "blocked"; }
  r.ws = await new Promise((done) => {
    const ws = new WebSocket(ctl.replace("http", "ws") + "/projects/" + %[3]q + "/mcp", "mcp");
    ws.onopen = () => done("open");
    ws.onerror = () => done("refused");
  });
  window.done = true;
})();
</script>`

// TestPageOnAnotherLoopbackPortCannotAttach opens, in a real browser of
// the user's account, a page served from another loopback port: its
// no-cors POSTs (text, untyped) reach the broker and attach nothing; a
// request with the Berth-Client header needs a preflight, which fails; it
// can read no answer; the WebSocket to the shim's route is refused.
func TestPageOnAnotherLoopbackPortCannotAttach(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	bctx := browser(t, ctx)
	ctl, _ := brokertest.PortRange(t, 1)
	addr := fmt.Sprintf("127.0.0.1:%d", ctl)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr}})
	held := b.Attach(t, brokertest.Project(t, "held", nil))
	if _, err := b.Client.Attach(ctx, api.AttachRequest{Root: held.Root, Kind: api.HolderShim, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	target := brokertest.Project(t, "target", nil)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf(attackPage, "http://"+addr, target, held.ID)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	if err := chromedp.Do(bctx, chromedp.Navigate("http://"+ln.Addr().String()+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`window.done === true`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the page did not finish: %v", err)
	}
	raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify(window.results)`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("results %q: %v", raw, err)
	}
	t.Logf("what the page saw: %v", got)
	if got["json"] != "blocked" || got["read"] != "blocked" || got["ws"] != "refused" {
		t.Errorf("the page got through: %v", got)
	}
	ps, err := b.Client.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].ID != held.ID || ps[0].Holders != 2 {
		t.Fatalf("after the page the broker serves %+v, want only %s with its 2 holders", ps, held.ID)
	}
	if _, err := api.ReadStateFile(target); err == nil {
		t.Fatal("the page's directory got a state file")
	}
}

// TestDashboardLoginLinkInBrowser runs the broker as on macOS
// (--token-only): the dashboard opened without a link shows how to get in
// and no data; opened with `berth dashboard`'s link it logs in, drops the
// code from the address bar, shows the projects, keeps working after a
// reload and searches; the same link a second time is refused.
func TestDashboardLoginLinkInBrowser(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	bctx := browser(t, ctx)
	ctl, _ := brokertest.PortRange(t, 1)
	base := fmt.Sprintf("http://127.0.0.1:%d/", ctl)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl), "--token-only"}})
	shop := b.Attach(t, brokertest.Project(t, "shop", shopStandards))
	card := chromedp.CSS(fmt.Sprintf(`#projects article[data-id=%q]`, shop.ID))
	text := func(sel chromedp.CSS) string { t.Helper(); return pageText(t, bctx, sel) }

	if err := chromedp.Do(bctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`#access`))); err != nil {
		t.Fatalf("the page without a link: %v", err)
	}
	if access, projects := text(`#access`), text(`#projects`); !strings.Contains(access, "berth dashboard") || strings.Contains(projects, "shop") {
		t.Fatalf("without a link the page says %q and lists %q", access, projects)
	}

	link, _ := dashboardLink(t, b.Home)
	if err := chromedp.Do(bctx,
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(link),
		chromedp.WaitVisible(card),
		chromedp.WaitVisible(chromedp.CSS(`#live.on`)),
	); err != nil {
		t.Fatalf("the page with the link: %v", err)
	}
	if loc, err := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href`)); err != nil || strings.Contains(loc, "login") {
		t.Fatalf("the address bar still holds the code: %q %v", loc, err)
	}
	if err := chromedp.Do(bctx,
		chromedp.Reload(),
		chromedp.WaitVisible(card),
		chromedp.SetValue(chromedp.CSS(`#search-project`), shop.ID),
		chromedp.SendKeys(chromedp.CSS(`#search-q`), "closing files"),
		chromedp.Click(chromedp.CSS(`#search button`)),
		chromedp.WaitVisible(chromedp.CSS(`#search-results li`)),
	); err != nil {
		t.Fatalf("after a reload: %v", err)
	}
	if res := text(`#search-results`); !strings.Contains(res, "errors.md") {
		t.Errorf("search results: %s", res)
	}

	if err := chromedp.Do(bctx,
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`#access`)),
	); err != nil {
		t.Fatalf("the used link: %v", err)
	}
	if access := text(`#access`); !strings.Contains(access, "used already") {
		t.Fatalf("the used link: the page says %q", access)
	}
}
