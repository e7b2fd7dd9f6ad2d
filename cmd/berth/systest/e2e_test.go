package systest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/berth-dev/berth/shim"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestThreeProjectsGetOwnPortsAndStateFiles(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	ports := map[int]string{}
	var roots []string
	for _, name := range []string{"alpha", "beta", "gamma"} {
		root := brokertest.Project(t, name, nil)
		roots = append(roots, root)
		cmd := exec.Command(brokertest.Berth(t), "attach", root)
		cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("berth attach %s: %v\n%s", root, err, out)
		}
		sf, err := api.ReadStateFile(root)
		if err != nil {
			t.Fatal(err)
		}
		if sf.PID != b.PID() || sf.Transport != api.TransportHTTP || sf.Project.Root != root || sf.Project.Name != name {
			t.Errorf("state file of %s = %+v", name, sf)
		}
		if prev, dup := ports[*sf.Port]; dup {
			t.Fatalf("%s and %s share port %d", prev, name, *sf.Port)
		}
		if *sf.Port < b.Start || *sf.Port > b.End {
			t.Errorf("port %d outside %d-%d", *sf.Port, b.Start, b.End)
		}
		ports[*sf.Port] = name
		fi, err := os.Stat(api.StatePath(root))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
		}
		gi, err := os.ReadFile(filepath.Join(root, ".praxis-os", ".gitignore"))
		if err != nil || !strings.Contains(string(gi), api.StateFileName) {
			t.Errorf(".praxis-os/.gitignore = %q, %v", gi, err)
		}
		if _, err := os.Stat(filepath.Join(root, ".gitignore")); err == nil {
			t.Error("the project's top-level .gitignore was created")
		}
	}
	ps, err := b.Client.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("/projects lists %d projects, want 3: %+v", len(ps), ps)
	}
	for _, p := range ps {
		if ports[p.Port] != p.Name || !strings.HasSuffix(p.URL, fmt.Sprintf(":%d/mcp", p.Port)) || p.StartedAt.IsZero() {
			t.Errorf("listed %+v", p)
		}
	}
	// The CLI table and JSON agree with the API.
	cmd := exec.Command(brokertest.Berth(t), "projects", "--json")
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var list api.ProjectList
	if err := json.Unmarshal(out, &list); err != nil || len(list.Projects) != 3 {
		t.Fatalf("berth projects --json: %v %s", err, out)
	}

	// SIGTERM: state files and socket removed, exit 0.
	if err := b.Stop(t); err != nil {
		t.Fatalf("broker exit after SIGTERM: %v\n%s", err, b.Stderr())
	}
	for _, root := range roots {
		if _, err := os.Stat(api.StatePath(root)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("state file of %s survives shutdown: %v", root, err)
		}
	}
	if _, err := os.Stat(api.SocketPath(b.Home)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket survives shutdown: %v", err)
	}
	for p := range ports {
		brokertest.AssertPortFree(t, p)
	}
}

func TestShimAndSubAgentShareTheProject(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "shared", nil)

	tr, _ := shimTransport(t, b.Home, root)
	ide := connectMCP(t, ctx, tr)
	tools, err := ide.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hasTool(tools.Tools, "get_server_info") {
		t.Fatalf("tools/list lacks get_server_info: %v", toolNames(tools.Tools))
	}
	info := getServerInfo(t, ctx, ide)
	if info.Project.Root != root || info.Server.Transport != "stdio" || info.Server.PID != b.PID() {
		t.Fatalf("IDE sees %+v", info)
	}
	if string(info.Project.Git) != "null" {
		t.Errorf("git = %s for a non-repository, want null", info.Project.Git)
	}

	sf, err := api.ReadStateFile(root)
	if err != nil {
		t.Fatal(err)
	}
	if sf.Transport != api.TransportDual || sf.URL == nil {
		t.Fatalf("state file %+v", sf)
	}
	// A sub-agent reads the state file and uses every HTTP transport at the same time.
	var wg sync.WaitGroup
	transports := map[string]mcp.Transport{
		"http":      &mcp.StreamableClientTransport{Endpoint: *sf.URL},
		"sse":       &mcp.SSEClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/sse", *sf.Port)},
		"websocket": &mcpws.ClientTransport{URL: fmt.Sprintf("ws://127.0.0.1:%d/ws", *sf.Port)},
	}
	for name, tr := range transports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := connectMCP(t, ctx, tr)
			got := getServerInfo(t, ctx, s)
			if got.Project.Root != root || got.Server.Transport != name {
				t.Errorf("%s sub-agent sees %+v", name, got)
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); getServerInfo(t, ctx, ide) }()
	wg.Wait()

	// One server serves them all, and still tells the transports apart.
	want := map[string]int{"stdio": 1, "http": 1, "sse": 1, "websocket": 1}
	var p api.Project
	brokertest.Poll(10*time.Second, func() bool {
		p, err = b.Client.Project(ctx, api.ProjectID(root))
		return err == nil && maps.Equal(p.SessionsByTransport, want)
	})
	if err != nil || !maps.Equal(p.SessionsByTransport, want) || p.Sessions != 4 || p.Holders != 1 {
		t.Errorf("project shows %d sessions %v, %d holders; want 4 %v and 1 holder (%v)", p.Sessions, p.SessionsByTransport, p.Holders, want, err)
	}
	if got := info.Capabilities.Transports; !slices.Equal(got, []string{"stdio", "http", "sse", "websocket"}) {
		t.Errorf("get_server_info lists transports %v", got)
	}
}

func TestProjectsAreIsolated(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	rootA := brokertest.Project(t, "projA", nil)
	rootB := brokertest.Project(t, "projB", nil)
	a, bb := b.Attach(t, rootA), b.Attach(t, rootB)
	if a.Port == bb.Port {
		t.Fatal("two projects share a port")
	}
	for _, tc := range []struct {
		url, want, other string
	}{{a.URL, rootA, rootB}, {bb.URL, rootB, rootA}} {
		for i := 0; i < 3; i++ {
			s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: tc.url})
			info := getServerInfo(t, ctx, s)
			if info.Project.Root != tc.want || info.Project.Root == tc.other {
				t.Fatalf("%s answered for %s", tc.url, info.Project.Root)
			}
		}
	}
}

func TestShimAutostartsExactlyOneBroker(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	ctx := testCtx(t, 60*time.Second)
	root1 := brokertest.Project(t, "auto1", nil)
	root2 := brokertest.Project(t, "auto2", nil)
	env := []string{"BERTH_IDLE_TIMEOUT=2s"}
	// Two IDE windows open at once with no broker running.
	var wg sync.WaitGroup
	pids := make([]int, 2)
	t.Cleanup(func() { brokertest.KillPID(pids[0]); brokertest.KillPID(pids[1]) })
	for i, root := range []string{root1, root2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, _ := shimTransport(t, home, root, env...)
			s := connectMCP(t, ctx, tr)
			info := getServerInfo(t, ctx, s)
			if info.Project.Root != root {
				t.Errorf("shim for %s sees %s", root, info.Project.Root)
			}
			pids[i] = info.Server.PID
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if pids[0] != pids[1] || pids[0] == 0 {
		t.Fatalf("two shims reached brokers %d and %d, want one", pids[0], pids[1])
	}
	c := api.NewUnixClient(api.SocketPath(home))
	h, err := c.Health(ctx)
	if err != nil || h.PID != pids[0] {
		t.Fatalf("health = %+v, %v", h, err)
	}
	lock, _ := os.ReadFile(filepath.Join(home, api.LockName))
	if strings.TrimSpace(string(lock)) != strconv.Itoa(pids[0]) {
		t.Errorf("lock file names %q, want %d", lock, pids[0])
	}
	if h.IdleTimeout == "" {
		t.Error("an auto-started broker has no idle timeout")
	}
}

func TestAutostartedBrokerExitsWhenIdle(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "idle", nil)
	var pid int
	killAtEnd(t, &pid)
	tr, cmd := shimTransport(t, home, root, "BERTH_IDLE_TIMEOUT=500ms")
	s := connectMCP(t, ctx, tr)
	pid = getServerInfo(t, ctx, s).Server.PID
	s.Close() // closes the shim's stdin and waits for it
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("shim exit: %v", cmd.ProcessState)
	}
	// grace (300ms) + idle (500ms): the broker goes; bounded wait.
	if !brokertest.WaitGone(pid, 15*time.Second) {
		t.Fatal("auto-started broker still running long after its idle timeout")
	}
	if _, err := os.Stat(api.StatePath(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file survives: %v", err)
	}
}

func TestShimExitsZeroOnStdinEOF(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "eof", nil)
	cmd := exec.Command(brokertest.Shim(t), "--project", root)
	brokertest.DieWithTest(cmd)
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = newLogWriter(t, "shim")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// An initialize and a call, then EOF at once: the reply must still come out.
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, `this is not json`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_server_info","arguments":{}}}`)
	stdin.Close()
	// The shim waits at most shim.DrainTimeout for the replies in flight;
	// the rest is margin for a loaded machine.
	if err := brokertest.WaitExit(cmd, shim.DrainTimeout+10*time.Second); err != nil {
		t.Fatalf("shim after stdin EOF: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sawParseError, sawInfo bool
	for _, l := range lines {
		var msg struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct{ Code int }
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Fatalf("stdout carries a non-JSON line %q", l)
		}
		if msg.Error != nil && msg.Error.Code == -32700 {
			sawParseError = true
		}
		if msg.ID == float64(2) && strings.Contains(string(msg.Result), root) {
			sawInfo = true
		}
	}
	if !sawParseError || !sawInfo {
		t.Fatalf("stdout = %s", stdout.String())
	}
	// The shim detached: the mount's holder count is back to zero.
	ctx := testCtx(t, 10*time.Second)
	if p, err := b.Client.Project(ctx, api.ProjectID(root)); err == nil && p.Holders != 0 {
		t.Errorf("holders = %d after the shim left", p.Holders)
	}
}

func TestKilledShimIsReleasedAndMountExpires(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--mount-grace", "200ms"}, Env: []string{"BERTH_REAP_INTERVAL=100ms"}})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "killed", nil)
	tr, cmd := shimTransport(t, b.Home, root)
	s := connectMCP(t, ctx, tr)
	getServerInfo(t, ctx, s)
	sf, err := api.ReadStateFile(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.Close() // the transport reaps the killed shim
	brokertest.Poll(15*time.Second, func() bool {
		_, err := b.Client.Project(ctx, api.ProjectID(root))
		return errors.Is(err, api.CodeNotMounted)
	})
	if _, err := b.Client.Project(ctx, api.ProjectID(root)); !errors.Is(err, api.CodeNotMounted) {
		t.Fatalf("mount of a killed shim still there: %v", err)
	}
	if _, err := os.Stat(api.StatePath(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file survives unmount: %v", err)
	}
	brokertest.AssertPortFree(t, *sf.Port)
}

func TestPortAllocation(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{Ports: 3})
	// The project prefers the first port of the range, which something else holds.
	busy, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(b.Start))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := fmt.Sprintf("mcp:\n  http_port: %d\n", b.Start)
	root := brokertest.Project(t, "pref", map[string]string{".praxis-os/config.yaml": cfg})
	resp := b.Attach(t, root)
	if resp.Port != b.Start+1 {
		t.Fatalf("got port %d, want the next free one %d", resp.Port, b.Start+1)
	}
	// Fill the rest of the range: the next attach mounts without a port
	// and says what is missing and how to fix it.
	other, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(b.Start+2))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := testCtx(t, 10*time.Second)
	full, err := b.Client.Attach(ctx, api.AttachRequest{Root: brokertest.Project(t, "full", nil), Kind: api.HolderCLI})
	if err != nil {
		t.Fatalf("attach with a full range: %v", err)
	}
	if full.Port != 0 || full.URL != "" || len(full.Warnings) == 0 || !strings.Contains(full.Warnings[0], "ports.start") || !strings.Contains(full.Warnings[0], "ports.end") {
		t.Fatalf("attach with a full range: %+v", full)
	}
	if _, err := b.Client.Health(ctx); err != nil {
		t.Fatalf("broker down after an attach without a port: %v", err)
	}
}

func TestSecondBrokerOnSameHomeRefuses(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	_, err := brokertest.TryStartBroker(t, brokertest.Options{Home: b.Home})
	if err == nil || !strings.Contains(err.Error(), "broker already running (pid "+strconv.Itoa(b.PID())+")") {
		t.Fatalf("second broker: %v", err)
	}
	ctx := testCtx(t, 10*time.Second)
	if _, err := b.Client.Health(ctx); err != nil {
		t.Fatalf("first broker hurt by the second: %v", err)
	}
}

// TestBadInputGetsJSONErrors sends bad requests to the control API: each
// is refused with its status, a message naming the problem and a code.
func TestBadInputGetsJSONErrors(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 30*time.Second)
	noProject := t.TempDir()
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	cases := []struct {
		name, method, path, body string
		status                   int
		mention                  string
		code                     api.Code
	}{
		{"malformed json", "POST", "/projects", `{"root":`, 400, "malformed JSON", api.CodeBadRequest},
		{"not an object", "POST", "/projects", `[1,2]`, 400, "malformed JSON", api.CodeBadRequest},
		{"unknown field", "POST", "/projects", `{"rot":"/tmp"}`, 400, "unknown field", api.CodeBadRequest},
		{"empty body", "POST", "/projects", ``, 400, "empty", api.CodeBadRequest},
		{"no praxis-os", "POST", "/projects", `{"root":"` + noProject + `"}`, 400, noProject, api.CodeNotProject},
		{"not a directory", "POST", "/projects", `{"root":"` + file + `"}`, 400, "not a directory", api.CodeNotProject},
		{"missing dir", "POST", "/projects", `{"root":"/nonexistent/berth/x"}`, 400, "does not exist", api.CodeNotProject},
		{"oversized", "POST", "/projects", `{"root":"` + strings.Repeat("a", api.MaxBodyBytes+10) + `"}`, 413, "over", api.CodeBodyTooLarge},
		{"bad kind", "POST", "/projects", `{"root":"` + noProject + `","kind":"robot"}`, 400, "", api.CodeNotProject},
		{"a folder as /", "POST", "/projects", `{"root":"/","folder":true,"pid":` + strconv.Itoa(os.Getpid()) + `}`, 400, "the filesystem's root", api.CodeFolderRefused},
		{"a pin of a folder", "POST", "/projects", `{"root":"` + noProject + `","folder":true,"kind":"cli"}`, 400, "pins projects only", api.CodeFolderRefused},
		{"a missing folder", "POST", "/projects", `{"root":"/nonexistent/berth/x","folder":true,"pid":` + strconv.Itoa(os.Getpid()) + `}`, 400, "does not exist", api.CodeNotProject},
		{"unknown project", "GET", "/projects/nope-123", ``, 404, "not mounted", api.CodeNotMounted},
		{"unknown detach", "DELETE", "/projects/nope-123", ``, 404, "not mounted", api.CodeNotMounted},
		{"unknown route", "GET", "/nope", ``, 404, "no such endpoint", api.CodeNoEndpoint},
		{"wrong method", "PUT", "/health", ``, 405, "not allowed", api.CodeMethod},
		{"search, bad n", "GET", "/projects/nope-123/search?q=x&n=many", ``, 400, "not a number", api.CodeBadRequest},
		{"search, not mounted", "GET", "/projects/nope-123/search?q=x", ``, 404, "not mounted", api.CodeNotMounted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, tc.method, b.Client.Base+tc.path, strings.NewReader(tc.body))
			resp, err := b.Client.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var e api.ErrorBody
			if err := json.Unmarshal(raw, &e); err != nil || e.Error == "" {
				t.Fatalf("body is not a JSON error: %s", raw)
			}
			if resp.StatusCode != tc.status || !strings.Contains(e.Error, tc.mention) || e.Code != tc.code {
				t.Fatalf("%d %q code %q, want %d mentioning %q with code %q", resp.StatusCode, e.Error, e.Code, tc.status, tc.mention, tc.code)
			}
			// The client hands back the same as a typed error.
			if got := api.ParseError(resp.StatusCode, raw); !errors.Is(got, tc.code) || got.Status != tc.status {
				t.Fatalf("ParseError = %#v, want code %q", got, tc.code)
			}
		})
	}
	if h, err := b.Client.Health(ctx); err != nil || h.Projects != 0 {
		t.Fatalf("after bad input: %+v %v", h, err)
	}
}

func TestProjectEndpointRefusesForeignHostAndOrigin(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	resp := b.Attach(t, brokertest.Project(t, "guarded", nil))
	for _, tc := range []struct{ host, origin string }{{"evil.example:80", ""}, {"", "http://evil.example"}} {
		req, _ := http.NewRequest("POST", resp.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if e := api.ParseError(r.StatusCode, raw); r.StatusCode != http.StatusForbidden || e.Code != api.CodeForbidden {
			t.Errorf("host %q origin %q: %d %+v, want 403 with code %s", tc.host, tc.origin, r.StatusCode, e, api.CodeForbidden)
		}
	}
}

// TestShimReconnectsAfterBrokerDies kill -9s the broker a shim started
// while the IDE's session and a sub-agent's HTTP session are open: the IDE's
// next call succeeds within 2 s on a new broker with the project on the same
// port, and the sub-agent's session, once saved, lives on under its id; a
// new one at the same URL works too.
func TestShimReconnectsAfterBrokerDies(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	ctx := testCtx(t, 90*time.Second)
	root := brokertest.Project(t, "phoenix", nil)
	start, end := brokertest.PortRange(t, 10)
	// The first port of the range is busy at the first mount only: the
	// project gets the next one, and keeps it after the restart because the
	// broker remembers it, not because it is first.
	busy, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(start))
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var first, second int
	killAtEnd(t, &first)
	killAtEnd(t, &second)
	tr, _ := shimTransport(t, home, root, "BERTH_IDLE_TIMEOUT=30s",
		"BERTH_PORTS_START="+strconv.Itoa(start), "BERTH_PORTS_END="+strconv.Itoa(end))
	s := connectMCP(t, ctx, tr)
	first = getServerInfo(t, ctx, s).Server.PID
	before, err := api.ReadStateFile(root)
	if err != nil || before.URL == nil {
		t.Fatalf("state file: %+v %v", before, err)
	}
	if *before.Port != start+1 {
		t.Fatalf("port %d, want %d (the first of the range is busy)", *before.Port, start+1)
	}
	busy.Close()
	sid := rawInitialize(t, ctx, *before.URL) // a sub-agent's session
	// It is saved a moment after its initialize (never while the answer
	// waits for berth.db): the broker says when.
	c := api.NewUnixClient(api.SocketPath(home))
	if !brokertest.Poll(10*time.Second, func() bool {
		list, err := c.Sessions(ctx, api.ProjectID(root))
		return err == nil && slices.ContainsFunc(list, func(s api.Session) bool { return s.ID == sid && s.Saved })
	}) {
		t.Fatalf("the sub-agent's session %s is not saved after 10s", sid)
	}

	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Gone means reaped: a killed process's leader shows as a zombie while
	// its other threads still hold its sockets, and a call written into
	// that window is lost with the broker (an honest -32603). Its parent,
	// the shim, reaps it once every thread has exited.
	if !brokertest.Poll(10*time.Second, func() bool { return brokertest.Reaped(first) }) {
		t.Fatalf("broker %d survived SIGKILL", first)
	}
	callCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	called := time.Now()
	res, err := s.CallTool(callCtx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("the first call after the broker died (2 s bound): %v %+v", err, res)
	}
	t.Logf("the first call after the kill was answered in %v (a new broker started, mounted and replayed)", time.Since(called))
	raw, _ := json.Marshal(res.StructuredContent)
	var info serverInfo
	json.Unmarshal(raw, &info)
	if second = info.Server.PID; second == 0 || second == first || info.Project.Root != root {
		t.Fatalf("after the restart the shim reaches %+v (first broker %d)", info, first)
	}
	after, err := api.ReadStateFile(root)
	if err != nil || after.PID != second || after.URL == nil || *after.URL != *before.URL {
		t.Fatalf("state file after reconnect: %+v %v; before: %s", after, err, *before.URL)
	}

	// The sub-agent's session lives on under its id: the new broker
	// restores it from berth.db.
	if status, msg := callServerInfo(t, ctx, *before.URL, sid); status != http.StatusOK || msg == nil || !strings.Contains(string(msg.Result), root) {
		t.Errorf("the sub-agent's session on the new broker: %d %+v, want it answered", status, msg)
	}
	status, msg := callServerInfo(t, ctx, *before.URL, rawInitialize(t, ctx, *before.URL))
	if status != http.StatusOK || msg == nil || !strings.Contains(string(msg.Result), root) {
		t.Fatalf("the sub-agent's new session at the same URL: %d %+v", status, msg)
	}
}

func TestShimStdioTransportWritesNullPort(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 30*time.Second)
	root := brokertest.Project(t, "stdioonly", nil)
	cmd := exec.Command(brokertest.Shim(t), "--transport", "stdio")
	cmd.Dir = filepath.Join(root, ".praxis-os") // found from the working directory
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home)
	cmd.Stderr = newLogWriter(t, "shim")
	s := connectMCP(t, ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second})
	if info := getServerInfo(t, ctx, s); info.Project.Root != root {
		t.Fatalf("shim found %s, want %s", info.Project.Root, root)
	}
	raw, err := os.ReadFile(api.StatePath(root))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	if m["transport"] != "stdio" || m["port"] != nil || m["url"] != nil {
		t.Fatalf("stdio state file: %s", raw)
	}
	if out, err := exec.Command(brokertest.Shim(t), "--transport", "carrier-pigeon", "--project", root).CombinedOutput(); err == nil || !strings.Contains(string(out), "dual, stdio or http") {
		t.Fatalf("bad transport: %v %s", err, out)
	}
}

func TestAutostartedBrokerToleratesBusyControlPort(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	home := autostartHome(t)
	ctx := testCtx(t, 30*time.Second)
	root := brokertest.Project(t, "busyctl", nil)
	var pid int
	killAtEnd(t, &pid)
	tr, _ := shimTransport(t, home, root, "BERTH_LISTEN="+busy.Addr().String(), "BERTH_IDLE_TIMEOUT=2s")
	s := connectMCP(t, ctx, tr)
	info := getServerInfo(t, ctx, s)
	pid = info.Server.PID
	if info.Project.Root != root {
		t.Fatalf("shim reached %s", info.Project.Root)
	}
	// By hand, the same busy address is a clear error.
	out, code := berthCmd(t, brokertest.Home(t), "serve", "--listen", busy.Addr().String())
	if code != 1 || !strings.Contains(out, "set listen to another address") {
		t.Fatalf("berth serve on a busy listen address: %d %s", code, out)
	}
}

// TestShimHTTPTransportOnlyAttaches runs `berth-shim --transport http`: it
// writes a state file saying http, forwards nothing on stdio (a request there
// gets an error naming the url), holds the project while stdin is open and
// releases it when stdin closes.
func TestShimHTTPTransportOnlyAttaches(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "httponly", nil)
	cmd := exec.Command(brokertest.Shim(t), "--transport", "http", "--project", root)
	brokertest.DieWithTest(cmd)
	// The broker it starts if this one dies uses the same port range.
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home, "BERTH_LISTEN=", "BERTH_IDLE_TIMEOUT=30s",
		"BERTH_PORTS_START="+strconv.Itoa(b.Start), "BERTH_PORTS_END="+strconv.Itoa(b.End))
	cmd.Stderr = newLogWriter(t, "shim")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var sf api.StateFile
	brokertest.Poll(10*time.Second, func() bool {
		sf, err = api.ReadStateFile(root)
		return err == nil
	})
	if err != nil || sf.Transport != api.TransportHTTP || sf.URL == nil || sf.PID != b.PID() {
		t.Fatalf("state file of an http shim: %+v %v", sf, err)
	}
	info := getServerInfo(t, ctx, connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL}))
	if info.Project.Root != root || info.Server.Transport != "http" {
		t.Fatalf("the IDE's HTTP session sees %+v", info)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"error"`) || !strings.Contains(line, *sf.URL) || !strings.Contains(line, "--transport http") {
		t.Fatalf("a request on stdin of an http shim: %q %v", line, err)
	}
	if p, err := b.Client.Project(ctx, api.ProjectID(root)); err != nil || p.Holders != 1 {
		t.Fatalf("while the shim runs: %+v %v", p, err)
	}

	// The broker dies: the shim starts another, attaches again and rewrites
	// the state file; the IDE's URL still works.
	b.Kill(t)
	var next api.StateFile
	killAtEnd(t, &next.PID)
	brokertest.Poll(brokertest.WaitLimit, func() bool { // a broker starting on a loaded machine
		next, _ = api.ReadStateFile(root)
		return next.PID != 0 && next.PID != b.PID()
	})
	if next.PID == 0 || next.PID == b.PID() || next.Transport != api.TransportHTTP || next.URL == nil || *next.URL != *sf.URL {
		t.Fatalf("state file after the broker died: %+v (before: %+v)", next, sf)
	}
	if info := getServerInfo(t, ctx, connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *next.URL})); info.Server.PID != next.PID {
		t.Fatalf("after the restart the URL reaches %+v", info)
	}

	stdin.Close()
	if err := brokertest.WaitExit(cmd, 10*time.Second); err != nil {
		t.Fatalf("http shim after stdin closed: %v", err)
	}
	c := api.NewUnixClient(api.SocketPath(b.Home))
	if p, err := c.Project(ctx, api.ProjectID(root)); err == nil && p.Holders != 0 {
		t.Errorf("holders = %d after the shim left", p.Holders)
	}
}
