package systest

import (
	"encoding/json"
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
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/berth-dev/berth/broker/peer/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// privateStandards is a project whose standards only its owner may read.
var privateStandards = map[string]string{
	".praxis-os/standards/private.md": "# Private\n\n## Payroll\n\nowner-only-marker-words live here.\n",
}

// wsUpgrade is what curl sends to open a WebSocket with the mcp subprotocol.
var wsUpgrade = []string{"--http1.1", "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 13",
	"-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "-H", "Sec-WebSocket-Protocol: mcp"}

var jsonPost = []string{"-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"}

func join(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestAnotherAccountGetsNothing serves a project with private standards
// and a live IDE hold, then tries, as a second real account,
// every route of the control API over TCP and every way into the
// project's port, with auth none and with auth token: each answer is 403
// not_owner and carries none of the owner's data, nothing is mounted or
// released, and each refused connection leaves one log line naming the
// account's uid. With auth token, the token admits that account too.
func TestAnotherAccountGetsNothing(t *testing.T) {
	t.Parallel()
	acct := peertest.Second(t)
	for _, auth := range []string{"none", "token"} {
		t.Run("auth "+auth, func(t *testing.T) {
			ctx := testCtx(t, 2*time.Minute)
			ctl, _ := brokertest.PortRange(t, 1)
			addr := fmt.Sprintf("127.0.0.1:%d", ctl)
			b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr, "--auth", auth}})
			root := brokertest.Project(t, "private", privateStandards)
			pin := b.Attach(t, root)
			held, err := b.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()})
			if err != nil {
				t.Fatal(err)
			}
			secrets := []string{root, held.Lease, "owner-only-marker-words", "private.md", "Payroll"}
			token := ""
			if auth == "token" {
				raw, err := os.ReadFile(filepath.Join(b.Home, "token"))
				if err != nil {
					t.Fatal(err)
				}
				token = strings.TrimSpace(string(raw))
				secrets = append(secrets, token)
			}
			// A directory the other account prepared, to be mounted.
			theirs := brokertest.Project(t, "theirs", nil)
			attach := fmt.Sprintf(`{"root":%q,"kind":"cli"}`, theirs)
			ctlURL, portURL := "http://"+addr, fmt.Sprintf("http://127.0.0.1:%d", pin.Port)
			lease := []string{"-H", api.LeaseHeader + ": " + held.Lease}
			tries := [][]string{
				{ctlURL + "/health"},
				{ctlURL + "/metrics"},
				{"-H", "Accept: text/event-stream", ctlURL + "/events"},
				{ctlURL + "/"},
				{ctlURL + "/assets/app.js"},
				{ctlURL + "/projects"},
				join(jsonPost, []string{"-d", attach, ctlURL + "/projects"}),
				{"-H", "Content-Type: text/plain", "-H", "Origin: http://localhost:3000", "-d", attach, ctlURL + "/projects"},
				{ctlURL + "/projects/" + pin.ID},
				{"-X", "DELETE", ctlURL + "/projects/" + pin.ID},
				{"-X", "DELETE", ctlURL + "/projects/" + pin.ID + "?lease=" + held.Lease},
				{ctlURL + "/projects/" + pin.ID + "/search?q=owner-only-marker-words"},
				join(jsonPost, lease, []string{"-d", initializeBody, ctlURL + "/projects/" + pin.ID + "/mcp"}),
				join(wsUpgrade, lease, []string{ctlURL + "/projects/" + pin.ID + "/mcp"}),
				join(jsonPost, []string{"-d", `{"code":"0123"}`, ctlURL + "/dashboard/login"}),
				join(jsonPost, []string{"-d", `{}`, ctlURL + "/shutdown"}),
				{ctlURL + "/servers"},
				join(jsonPost, []string{"-d", attach, ctlURL + "/servers/revoke"}),
				join(jsonPost, []string{"-d", initializeBody, portURL + "/mcp"}),
				{"-H", "Accept: text/event-stream", portURL + "/sse"},
				join(wsUpgrade, []string{portURL + "/ws"}),
				{portURL + "/"},
			}
			for _, args := range tries {
				code, out := acct.Curl(t, append([]string{"-i"}, args...)...)
				wantNotOwner(t, args, code, out, secrets)
			}
			if token != "" {
				// A wrong token is a wrong credential: 401, whoever sends it.
				wrong := []string{"-H", "Authorization: Bearer " + strings.Repeat("0", len(token))}
				for _, args := range [][]string{join(wrong, []string{ctlURL + "/projects"}), join(wrong, jsonPost, []string{"-d", initializeBody, portURL + "/mcp"})} {
					code, out := acct.Curl(t, append([]string{"-i"}, args...)...)
					wantRefusedAs(t, args, code, out, secrets, http.StatusUnauthorized, api.CodeUnauthorized)
					tries = append(tries, args)
				}
			}

			// Nothing was mounted, released or stopped.
			ps, err := b.Client.Projects(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 || ps[0].ID != pin.ID || ps[0].Holders != 2 || !ps[0].Pinned {
				t.Fatalf("after the other account's tries the broker serves %+v, want only %s, pinned, with 2 holders", ps, pin.ID)
			}
			if _, err := api.ReadStateFile(theirs); err == nil {
				t.Fatal("the other account's directory got a state file")
			}
			log := refusedLines(t, b.Home)
			if len(log) != len(tries) {
				t.Fatalf("%d refusal log lines for %d refused connections:\n%s", len(log), len(tries), strings.Join(log, "\n"))
			}
			for _, l := range log {
				if !strings.Contains(l, fmt.Sprintf("peer_uid=%d", acct.UID)) {
					t.Errorf("log line does not name uid %d: %s", acct.UID, l)
				}
				for _, s := range []string{theirs, "owner-only-marker-words", held.Lease} {
					if strings.Contains(l, s) {
						t.Errorf("log line carries %q: %s", s, l)
					}
				}
			}

			if token == "" {
				return
			}
			// The token is the second key: whoever holds it gets in.
			bearer := []string{"-H", "Authorization: Bearer " + token}
			if code, out := acct.Curl(t, join(bearer, []string{ctlURL + "/projects"})...); code != http.StatusOK || !strings.Contains(out, pin.ID) {
				t.Fatalf("the other account with the token: %d %s", code, out)
			}
			if code, out := acct.Curl(t, join(bearer, jsonPost, []string{"-d", initializeBody, portURL + "/mcp"})...); code != http.StatusOK || !strings.Contains(out, `"serverInfo"`) {
				t.Fatalf("the other account with the token on the port: %d %s", code, out)
			}
		})
	}
}

// wantNotOwner checks a curl -i answer: 403, a JSON error with code
// not_owner, and none of secrets anywhere, headers included.
func wantNotOwner(t *testing.T, args []string, code int, out string, secrets []string) {
	t.Helper()
	wantRefusedAs(t, args, code, out, secrets, http.StatusForbidden, api.CodeNotOwner)
}

// wantRefusedAs checks a refusal with status and a JSON error of code that
// carries none of secrets.
func wantRefusedAs(t *testing.T, args []string, code int, out string, secrets []string, status int, want api.Code) {
	t.Helper()
	_, body, _ := strings.Cut(strings.ReplaceAll(out, "\r\n", "\n"), "\n\n")
	var e api.ErrorBody
	if code != status || json.Unmarshal([]byte(body), &e) != nil || e.Code != want {
		t.Errorf("curl %v as another account: %d\n%s\nwant %d with code %s", args, code, out, status, want)
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("curl %v as another account: the answer carries %q:\n%s", args, s, out)
		}
	}
}

// refusedLines are the broker log's lines about refused connections.
func refusedLines(t *testing.T, home string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(home, api.LogName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.Contains(l, "refused a connection") {
			out = append(out, l)
		}
	}
	return out
}

// TestBrowserStyleRequestsCannotAttach sends, as the owner (a page in the
// owner's browser runs as the owner), the mutating requests a web page
// could send without a CORS preflight: a plain-text POST with a
// http://localhost:3000 Origin and its variants attach nothing, a DELETE
// with an Origin releases nothing, a WebSocket to the shim's route with an
// Origin is refused; what programs send (JSON, no Origin) and what the
// dashboard sends (the Berth-Client header) work.
func TestBrowserStyleRequestsCannotAttach(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	ctl, _ := brokertest.PortRange(t, 1)
	addr := fmt.Sprintf("127.0.0.1:%d", ctl)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr}})
	target := brokertest.Project(t, "target", nil)
	body := fmt.Sprintf(`{"root":%q,"kind":"cli"}`, target)
	tcp := api.NewTCPClient(addr)
	send := func(method, path, body string, header map[string]string) (int, api.ErrorBody) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, tcp.Base+path, strings.NewReader(body))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := tcp.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e api.ErrorBody
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	page := "http://localhost:3000"
	for _, h := range []map[string]string{
		{"Origin": page, "Content-Type": "text/plain;charset=UTF-8"},
		{"Content-Type": "text/plain"},
		{"Content-Type": "application/x-www-form-urlencoded"},
		{"Content-Type": "multipart/form-data; boundary=x"},
		{},
		{"Origin": page, "Content-Type": "application/json"},
		{"Origin": "http://" + addr, "Content-Type": "application/json"}, // the dashboard's origin needs the header too
	} {
		if code, e := send(http.MethodPost, "/projects", body, h); code != http.StatusForbidden || e.Code != api.CodeBrowserRequest || !strings.Contains(e.Error, api.ClientHeader) {
			t.Errorf("POST /projects with %v: %d %+v, want 403 %s naming the fix", h, code, e, api.CodeBrowserRequest)
		}
	}
	if ps, _ := b.Client.Projects(ctx); len(ps) != 0 {
		t.Fatalf("browser-style requests mounted %+v", ps)
	}
	if _, err := api.ReadStateFile(target); err == nil {
		t.Fatal("a browser-style request left a state file")
	}

	// A program's request (JSON, no Origin) attaches; so does the dashboard's.
	if _, err := tcp.Attach(ctx, api.AttachRequest{Root: target, Kind: api.HolderCLI}); err != nil {
		t.Fatalf("a program's attach over TCP: %v", err)
	}
	other := brokertest.Project(t, "other", nil)
	if code, e := send(http.MethodPost, "/projects", fmt.Sprintf(`{"root":%q,"kind":"cli"}`, other),
		map[string]string{"Origin": "http://" + addr, "Content-Type": "application/json", api.ClientHeader: "dashboard"}); code != http.StatusOK {
		t.Fatalf("the dashboard's way: %d %+v", code, e)
	}
	id := api.ProjectID(target)
	held, err := b.Client.Attach(ctx, api.AttachRequest{Root: target, Kind: api.HolderShim, PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if code, e := send(http.MethodDelete, "/projects/"+id, "", map[string]string{"Origin": page}); code != http.StatusForbidden || e.Code != api.CodeBrowserRequest {
		t.Errorf("DELETE with an Origin: %d %+v", code, e)
	}
	if code, e := send(http.MethodGet, "/projects/"+id+"/mcp", "", map[string]string{
		"Origin": page, api.LeaseHeader: held.Lease, "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "mcp",
	}); code != http.StatusForbidden || e.Code != api.CodeBrowserRequest {
		t.Errorf("a WebSocket to the shim's route with an Origin: %d %+v", code, e)
	}
	if p, err := b.Client.Project(ctx, id); err != nil || !p.Pinned || p.Holders != 2 {
		t.Fatalf("after the refused DELETE: %+v %v", p, err)
	}
}

// TestShimRouteNeedsALiveLease: the control API's MCP route serves only
// the holder of a live attach of that project; shim attaches must name a
// live process and roots must be absolute.
func TestShimRouteNeedsALiveLease(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{Env: []string{"BERTH_REAP_INTERVAL=1h"}})
	ctx := testCtx(t, time.Minute)
	root := brokertest.Project(t, "leased", nil)
	pin := b.Attach(t, root)
	other := b.Attach(t, brokertest.Project(t, "other", nil))

	// A process that attaches, then exits before it connects.
	gone := startProcess(t, "sleep", "30")
	dead, err := b.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: gone.Process.Pid})
	if err != nil {
		t.Fatal(err)
	}
	gone.Process.Kill()
	gone.Wait()
	live, err := b.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, id, lease string
		status          int
		code            api.Code
	}{
		{"no lease", pin.ID, "", 403, api.CodeLeaseRequired},
		{"unknown lease", pin.ID, "0123456789abcdef01234567", 403, api.CodeLeaseNotHeld},
		{"a pin's lease", pin.ID, pin.Lease, 403, api.CodeHolderNotLive},
		{"a holder that exited", pin.ID, dead.Lease, 403, api.CodeHolderNotLive},
		{"another project's lease", other.ID, live.Lease, 403, api.CodeLeaseNotHeld},
	} {
		req := mcpPost(t, b.Client.MCPURL(tc.id), "", initializeBody)
		if tc.lease != "" {
			req.Header.Set(api.LeaseHeader, tc.lease)
		}
		resp, err := b.Client.HTTP.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		var e api.ErrorBody
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %+v, want %d %s", tc.name, resp.StatusCode, e, tc.status, tc.code)
		}
	}
	// The live holder's lease opens an IDE session.
	hc := &http.Client{Transport: headerTransport{h: map[string]string{api.LeaseHeader: live.Lease}, next: b.Client.HTTP.Transport}}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Client.MCPURL(pin.ID), HTTPClient: hc, DisableStandaloneSSE: true})
	if info := getServerInfo(t, ctx, s); info.Project.Root != root || info.Server.Transport != "stdio" {
		t.Fatalf("the holder's session: %+v", info)
	}

	// Shim attaches name a live process; roots are absolute.
	for _, tc := range []struct {
		name string
		req  api.AttachRequest
		code api.Code
	}{
		{"no pid", api.AttachRequest{Root: root}, api.CodePIDRequired},
		{"pid 1", api.AttachRequest{Root: root, Kind: api.HolderShim, PID: 1}, api.CodePIDRequired},
		{"an exited pid", api.AttachRequest{Root: root, Kind: api.HolderShim, PID: gone.Process.Pid}, api.CodePIDRequired},
		{"a relative root", api.AttachRequest{Root: filepath.Base(root), Kind: api.HolderCLI}, api.CodeRelativeRoot},
	} {
		_, err := b.Client.Attach(ctx, tc.req)
		if e := api.AsError(err); err == nil || e.Status != http.StatusBadRequest || e.Code != tc.code {
			t.Errorf("attach with %s: %v, want 400 %s", tc.name, err, tc.code)
		}
	}
	if p, err := b.Client.Project(ctx, pin.ID); err != nil || p.Holders != 3 {
		t.Fatalf("after the refused attaches: %+v %v (want the pin and two shim holds)", p, err)
	}
}

// TestOwnersSubAgentsNeedNoHeader: the user's own clients reach a project
// with the state file's plain url and no header, over streamable HTTP,
// SSE and WebSocket, with the TypeScript SDK and the go-sdk, with auth
// none and with auth token. The TypeScript clients of the three
// transports run one after the other in one Node process.
func TestOwnersSubAgentsNeedNoHeader(t *testing.T) {
	t.Parallel()
	node := needTSClient(t)
	transports := []string{"http", "sse", "websocket"}
	for _, auth := range []string{"none", "token"} {
		t.Run("auth "+auth, func(t *testing.T) {
			b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--auth", auth}})
			root := brokertest.Project(t, "plain", nil)
			b.Attach(t, root)
			sf, err := api.ReadStateFile(root)
			if err != nil {
				t.Fatal(err)
			}
			if (auth == "token") != (sf.Headers["Authorization"] != "") {
				t.Fatalf("auth %s: state file headers %v", auth, sf.Headers)
			}
			out := runTSScript(t, testCtx(t, 60*time.Second), node, shimEnv(t, b), "plainurl.mjs", append([]string{root}, transports...)...)
			ts := linesBy(t, "plainurl.mjs", out, "transport")
			for _, tr := range transports {
				t.Run(tr, func(t *testing.T) {
					if ts[tr] == nil {
						t.Fatalf("plainurl.mjs printed nothing for %s:\n%s", tr, out)
					}
					checkTSClient(t, b, root, tr, ts[tr])
					ctx := testCtx(t, 30*time.Second)
					base := strings.TrimSuffix(*sf.URL, "/mcp")
					var goTr mcp.Transport
					switch tr {
					case "http":
						goTr = &mcp.StreamableClientTransport{Endpoint: *sf.URL}
					case "sse":
						goTr = &mcp.SSEClientTransport{Endpoint: base + "/sse"}
					default:
						goTr = &mcpws.ClientTransport{URL: "ws" + strings.TrimPrefix(base, "http") + "/ws"}
					}
					if info := getServerInfo(t, ctx, connectMCP(t, ctx, goTr)); info.Project.Root != root || info.Server.Transport != tr {
						t.Fatalf("go-sdk over %s: %+v", tr, info)
					}
				})
			}
		})
	}
}

// startProcess starts name with args and kills it when the test ends.
func startProcess(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// TestProjectPortsServeNoOtherOrigin: a project port refuses every request
// with an Origin other than its own, a loopback page's included (it could
// open an SSE stream it cannot read); programs send none and pass.
func TestProjectPortsServeNoOtherOrigin(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 30*time.Second)
	p := b.Attach(t, brokertest.Project(t, "origins", nil))
	base := fmt.Sprintf("http://127.0.0.1:%d", p.Port)
	for _, origin := range []string{"http://localhost:3000", fmt.Sprintf("http://127.0.0.1:%d", p.Port+1), "http://evil.example"} {
		for _, path := range []string{"/", "/sse", "/mcp", "/ws"} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
			req.Header.Set("Origin", origin)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e api.ErrorBody
			json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || e.Code != api.CodeForbidden {
				t.Errorf("GET %s with Origin %s: %d %+v, want 403 %s", path, origin, resp.StatusCode, e, api.CodeForbidden)
			}
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	req.Header.Set("Origin", base)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / with the port's own origin: %d", resp.StatusCode)
	}
}
