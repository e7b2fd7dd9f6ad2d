package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/peer/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// loginLink is the link `berth dashboard` prints.
var loginLink = regexp.MustCompile(`http://\S+/#login=([0-9a-f]+)`)

// dashboardLink runs `berth dashboard` and returns the link and its code.
func dashboardLink(t *testing.T, home string) (string, string) {
	t.Helper()
	out, code := berthCmd(t, home, "dashboard")
	m := loginLink.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("berth dashboard: exit %d\n%s", code, out)
	}
	return m[0], m[1]
}

// redeem posts a login code as the dashboard page does.
func redeem(t *testing.T, ctx context.Context, c *api.Client, code string) (int, api.DashboardSession, api.ErrorBody) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/dashboard/login", strings.NewReader(`{"code":"`+code+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.ClientHeader, "dashboard")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s api.DashboardSession
	var e api.ErrorBody
	if resp.StatusCode == http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&s)
	} else {
		json.NewDecoder(resp.Body).Decode(&e)
	}
	return resp.StatusCode, s, e
}

// TestTokenOnlyBrokerAdmitsTheTokenAndLoginKeys runs the broker as on
// macOS, where it cannot tell a connection's account (--token-only): the
// token is in every state file even with auth none; without it even the
// user's own requests are refused; with the state file's headers
// sub-agents work; the dashboard's page is public and its data is not;
// `berth dashboard`'s one-time link gives a key that opens the control
// API, once, and only it.
func TestTokenOnlyBrokerAdmitsTheTokenAndLoginKeys(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 90*time.Second)
	ctl, _ := brokertest.PortRange(t, 1)
	addr := fmt.Sprintf("127.0.0.1:%d", ctl)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr, "--token-only"}})
	root := brokertest.Project(t, "private", privateStandards)
	pin := b.Attach(t, root)
	sf, err := api.ReadStateFile(root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sf.Headers["Authorization"], "Bearer ") {
		t.Fatalf("auth none, token only: the state file's headers are %v, want the token", sf.Headers)
	}
	tcp := api.NewTCPClient(addr)

	code, body := get(t, ctx, tcp, "/projects", nil)
	if e := api.ParseError(code, []byte(body)); code != http.StatusForbidden || e.Code != api.CodeNotOwner || !strings.Contains(e.Message, "berth dashboard") {
		t.Fatalf("GET /projects without the token: %d %s", code, body)
	}
	status, _, _ := doMCP(t, ctx, mcpPost(t, *sf.URL, "", initializeBody))
	if status != http.StatusForbidden {
		t.Fatalf("initialize without the token: %d", status)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL, HTTPClient: &http.Client{Transport: headerTransport{h: sf.Headers}}})
	if info := getServerInfo(t, ctx, s); info.Project.Root != root {
		t.Fatalf("with the state file's headers: %+v", info)
	}
	if code, body := get(t, ctx, tcp, "/projects", sf.Headers); code != http.StatusOK || !strings.Contains(body, pin.ID) {
		t.Fatalf("GET /projects with the token: %d %s", code, body)
	}

	// The page and its files are public: they hold no data.
	for _, path := range []string{"/", "/assets/app.js"} {
		if code, body := get(t, ctx, tcp, path, nil); code != http.StatusOK || strings.Contains(body, pin.ID) || strings.Contains(body, root) {
			t.Fatalf("GET %s: %d (%d bytes)", path, code, len(body))
		}
	}
	if code, _ := get(t, ctx, tcp, "/events", nil); code != http.StatusForbidden {
		t.Fatalf("GET /events without a key: %d", code)
	}

	// A one-time link: its code gives a key, once.
	_, loginCode := dashboardLink(t, b.Home)
	status, sess, _ := redeem(t, ctx, tcp, loginCode)
	if status != http.StatusOK || len(sess.Key) != 64 {
		t.Fatalf("redeem the link: %d %+v", status, sess)
	}
	if status, _, e := redeem(t, ctx, tcp, loginCode); status != http.StatusForbidden || e.Code != api.CodeLoginExpired {
		t.Fatalf("the same link again: %d %+v", status, e)
	}
	key := map[string]string{"Authorization": "Bearer " + sess.Key}
	if code, body := get(t, ctx, tcp, "/events", key); code != http.StatusOK || !strings.Contains(body, pin.ID) {
		t.Fatalf("GET /events with the key: %d %s", code, body)
	}
	// The key opens the control API, not a project's port: there it is a
	// wrong bearer token (401).
	req := mcpPost(t, *sf.URL, "", initializeBody)
	req.Header.Set("Authorization", key["Authorization"])
	if status, _, _ := doMCP(t, ctx, req); status != http.StatusUnauthorized {
		t.Fatalf("initialize with the dashboard's key: %d", status)
	}

	// Another account gets the same public page and nothing else.
	acct := peertest.Second(t)
	if code, out := acct.Curl(t, "http://"+addr+"/"); code != http.StatusOK || strings.Contains(out, pin.ID) {
		t.Fatalf("the page as another account: %d", code)
	}
	for _, url := range []string{"http://" + addr + "/projects", *sf.URL} {
		if code, out := acct.Curl(t, "-i", url); code != http.StatusForbidden || strings.Contains(out, root) {
			t.Fatalf("%s as another account: %d\n%s", url, code, out)
		}
	}
}

// TestDashboardCLIWithoutListen: with the TCP control API off there is no
// dashboard to link to, and `berth dashboard` says how to turn it on.
func TestDashboardCLIWithoutListen(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{}) // --listen ""
	out, code := berthCmd(t, b.Home, "dashboard")
	if code != 1 || !strings.Contains(out, "set listen") {
		t.Fatalf("berth dashboard with listen off: exit %d\n%s", code, out)
	}
}
