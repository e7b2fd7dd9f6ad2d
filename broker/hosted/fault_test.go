package hosted

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func fakeDecl(t testing.TB, name string) Decl {
	exe, env := fakeCommand(t)
	return Decl{Name: name, Origin: OriginUser, Server: validServer(exe, nil, env)}
}

// TestFakeServerSurface: tools, prompts and resources of a server appear
// namespaced next to the project's own tool, and calls reach it.
func TestFakeServerSurface(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	hp := openProject(t, newPool(t, testOptions()), "p1", fakeDecl(t, "fake"))
	s := connect(t, hp, sessionOpts{})
	names := toolNames(t, ctx, s)
	for _, want := range []string{"own", "fake__echo", "fake__pid", "fake__block"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if got := s.call(t, ctx, "fake__echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Errorf("fake__echo = %q", got)
	}
	if got := s.call(t, ctx, "own", nil); got != "own tool" {
		t.Errorf("own = %q", got)
	}
	pr, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "fake__greet", Arguments: map[string]string{"who": "berth"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := pr.Messages[0].Content.(*mcp.TextContent).Text; got != "hello berth" {
		t.Errorf("fake__greet = %q", got)
	}
	rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "fake://readme"})
	if err != nil || rr.Contents[0].Text != "fake readme" {
		t.Fatalf("read fake://readme: %v %+v", err, rr)
	}
	st := statusOf(t, hp, "fake")
	if st.State != StateRunning || st.PID == 0 || st.Tools != len(slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, "fake__") })) {
		t.Errorf("status %+v", st)
	}
	if st.RSSBytes == 0 {
		t.Errorf("no RSS for pid %d", st.PID)
	}
	if logs := hp.Logs("fake"); len(logs) == 0 || logs[0].Text != "fake server ready" || logs[0].Server != "fake" {
		t.Errorf("stderr ring = %+v", logs)
	}
}

// TestCrashingServerFails: a server that keeps exiting is marked failed with
// its exit and stderr, and another server of the project and the project's
// own tool keep working.
func TestCrashingServerFails(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	crash := Decl{Name: "crash", Origin: OriginUser, Server: validServer("sh", []string{"-c", "echo boom >&2; exit 1"}, nil)}
	crash.Server.Start = "eager"
	hp := openProject(t, newPool(t, testOptions()), "p1", crash, fakeDecl(t, "fake"))
	s := connect(t, hp, sessionOpts{})
	if !brokertest.Poll(30*time.Second, func() bool { return statusOf(t, hp, "crash").State == StateFailed }) {
		t.Fatalf("crash never failed: %+v", statusOf(t, hp, "crash"))
	}
	st := statusOf(t, hp, "crash")
	if !strings.Contains(st.LastError, "exit status 1") || !strings.Contains(st.LastError, "boom") || st.PID != 0 {
		t.Errorf("failed status %+v: want the exit and the stderr line", st)
	}
	if got := s.call(t, ctx, "fake__echo", map[string]any{"text": "still here"}); got != "still here" {
		t.Errorf("other server: %q", got)
	}
	if got := s.call(t, ctx, "own", nil); got != "own tool" {
		t.Errorf("own tool: %q", got)
	}
	if statusOf(t, hp, "fake").Restarts != 0 {
		t.Errorf("the healthy server restarted")
	}
}

// TestCallTimeout: a call past call_timeout gets a JSON-RPC error naming the
// server and the setting, and the server serves the next call.
func TestCallTimeout(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	d := fakeDecl(t, "fake")
	d.Server.CallTimeout = 300 * time.Millisecond
	hp := openProject(t, newPool(t, testOptions()), "p1", d)
	s := connect(t, hp, sessionOpts{})
	// The timed call is made once the server runs: its start (a process, a
	// handshake) may take longer than call_timeout on a busy machine, and
	// a call that finds it still starting gets another error.
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !brokertest.Poll(30*time.Second, func() bool { return statusOf(t, hp, "fake").State == StateRunning }) {
		t.Fatalf("the server is not running after 30s: %+v", statusOf(t, hp, "fake"))
	}
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fake__sleep", Arguments: map[string]any{"ms": 20000}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, `"fake"`) || !strings.Contains(rpcErr.Message, "call_timeout") {
		t.Fatalf("err = %v, want a JSON-RPC error naming the server and call_timeout", err)
	}
	if got := s.call(t, ctx, "fake__echo", map[string]any{"text": "after"}); got != "after" {
		t.Errorf("next call: %q", got)
	}
	if st := statusOf(t, hp, "fake"); st.Calls != 2 || st.Errors != 1 {
		t.Errorf("calls %d, errors %d; want 2 and 1", st.Calls, st.Errors)
	}
}

// TestCallWaitsOutASlowFirstStart: a call of a hosted tool whose server is
// still starting waits for it up to the call's own timeout, even when the
// start takes longer than a list waits (ListWait): the call names the
// server, so unlike a list it has nothing to answer without it.
func TestCallWaitsOutASlowFirstStart(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	d := fakeDecl(t, "slow")
	d.Server.Env["FAKE_START_DELAY_MS"] = "800"
	opts := testOptions()
	opts.ListWait = 50 * time.Millisecond // far below the start's 800 ms
	hp := openProject(t, newPool(t, opts), "p1", d)
	s := connect(t, hp, sessionOpts{})
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("call during the first start: %v", err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "hi" {
		t.Errorf("echo = %q, want hi", got)
	}
}

// TestSilentServerTimesOut: a server that never answers the MCP handshake
// makes a call fail after call_timeout with the reason, not hang.
func TestSilentServerTimesOut(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	d := Decl{Name: "silent", Origin: OriginUser, Server: validServer("sh", []string{"-c", "echo waiting >&2; exec sleep 300"}, nil)}
	d.Server.CallTimeout = 300 * time.Millisecond
	opts := testOptions()
	opts.StopGrace = 100 * time.Millisecond // sleep ignores its closed stdin: the close would wait out the whole grace
	hp := openProject(t, newPool(t, opts), "p1", d)
	s := connect(t, hp, sessionOpts{})
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "silent__anything"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, `hosted server "silent" is starting`) {
		t.Fatalf("err = %v, want the server and its state", err)
	}
}

// TestHostedToolErrors: calls of hosted tools that are not served say why.
func TestHostedToolErrors(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	unapproved := fakeDecl(t, "other")
	unapproved.Origin = OriginProject
	hp := openProject(t, newPool(t, testOptions()), "p1", fakeDecl(t, "fake"), unapproved)
	s := connect(t, hp, sessionOpts{})
	for name, want := range map[string]string{
		"fake__nope":  `hosted server "fake" has no tool "nope"`,
		"other__echo": `hosted server "other" does not run here (needs approval: declared by the project and not approved; run: berth servers approve `,
	} {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
}

// TestCrashDuringCall: a call in flight when the server dies gets an error
// naming the server and its last stderr line; the server comes back.
func TestCrashDuringCall(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	hp := openProject(t, newPool(t, testOptions()), "p1", fakeDecl(t, "fake"))
	s := connect(t, hp, sessionOpts{})
	first := s.call(t, ctx, "fake__pid", nil)
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fake__exit"})
	if err == nil || !strings.Contains(err.Error(), `"fake"`) || !strings.Contains(err.Error(), "dying on request") {
		t.Fatalf("err = %v, want the server's name and last stderr line", err)
	}
	if second := s.call(t, ctx, "fake__pid", nil); second == first {
		t.Errorf("same pid %s after the crash", second)
	}
	if st := statusOf(t, hp, "fake"); st.Restarts != 1 || st.State != StateRunning {
		t.Errorf("status after one crash: %+v", st)
	}
}

// TestCancellationReachesServer: cancelling the caller's context cancels the
// call inside the server.
func TestCancellationReachesServer(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	hp := openProject(t, newPool(t, testOptions()), "p1", fakeDecl(t, "fake"))
	s := connect(t, hp, sessionOpts{})
	mark := filepath.Join(t.TempDir(), "cancelled")
	callCtx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(callCtx, &mcp.CallToolParams{Name: "fake__block", Arguments: map[string]any{"text": mark}})
		errc <- err
	}()
	if !brokertest.Poll(20*time.Second, func() bool { l := hp.Logs("fake"); return len(l) > 0 && l[len(l)-1].Text == "blocking" }) {
		t.Fatal("the call never reached the server")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call succeeded")
	}
	if !brokertest.Poll(20*time.Second, func() bool { _, err := os.Stat(mark); return err == nil }) {
		t.Fatal("the server never saw the cancellation")
	}
}

// TestListChangedForwarded: a server adding a tool reaches every session as
// tools/list_changed and the new tool is served.
func TestListChangedForwarded(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	hp := openProject(t, newPool(t, testOptions()), "p1", fakeDecl(t, "fake"))
	changes := make(chan struct{}, 16)
	hp.OnChange(func() { changes <- struct{}{} })
	hp.ensure(ctx, "", time.Minute) // started before any session: no list_changed is due yet
	s1 := connect(t, hp, sessionOpts{version: "2025-11-25"})
	s2 := connect(t, hp, sessionOpts{})
	if slices.Contains(toolNames(t, ctx, s2), "fake__extra") {
		t.Fatal("fake__extra listed before it was added")
	}
	s1.call(t, ctx, "fake__add_tool", nil)
	for i, s := range []*session{s1, s2} {
		select {
		case <-s.toolChanges:
		case <-ctx.Done():
			t.Fatalf("session %d got no tools/list_changed", i+1)
		}
		if !slices.Contains(toolNames(t, ctx, s), "fake__extra") {
			t.Fatalf("session %d does not list fake__extra after list_changed", i+1)
		}
	}
	if got := s2.call(t, ctx, "fake__extra", nil); got != "extra" {
		t.Errorf("fake__extra = %q", got)
	}
	select {
	case <-changes:
	default:
		t.Error("OnChange not called")
	}
}

// TestServerRequestsReachCaller: a server on MCP 2026-07-28 asking for
// input inside a call reaches the session that made the call; roots are
// the project's root.
func TestServerRequestsReachCaller(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	hp := openProject(t, newPool(t, testOptions()), "p1", fakeDecl(t, "fake"))
	asked := make(chan string, 1)
	s := connect(t, hp, sessionOpts{version: "2025-11-25", client: mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "42"}}, nil
		}}})
	other := connect(t, hp, sessionOpts{version: "2025-11-25", client: mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the other session was asked")
			return &mcp.ElicitResult{Action: "decline"}, nil
		}}})
	_ = other
	if got := s.call(t, ctx, "fake__ask", map[string]any{"text": "the answer?"}); got != "accept:42" {
		t.Errorf("fake__ask = %q", got)
	}
	if q := <-asked; q != "the answer?" {
		t.Errorf("asked %q", q)
	}
	roots := s.call(t, ctx, "fake__roots", nil)
	if !strings.Contains(roots, "file://"+filepath.ToSlash(hp.spec.Root)) {
		t.Errorf("roots = %q, want the project root %s", roots, hp.spec.Root)
	}
	// A client without elicitation gets a clear error, not a hang.
	plain := connect(t, hp, sessionOpts{version: "2025-11-25"})
	if _, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "fake__ask", Arguments: map[string]any{"text": "q"}}); err == nil || !strings.Contains(err.Error(), "elicitation") {
		t.Errorf("err = %v, want it to say the client lacks elicitation", err)
	}
}

// TestStopLeavesNoProcess: closing the project stops its servers: the pid
// and its whole process group are gone.
func TestStopLeavesNoProcess(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	pool := newPool(t, testOptions())
	// A server that starts a grandchild in its group: stopping must take it too.
	exe, env := fakeCommand(t)
	wrapper := Decl{Name: "wrapped", Origin: OriginUser, Server: validServer("sh", []string{"-c", "sleep 300 & exec \"$0\"", exe}, env)}
	hp := openProject(t, pool, "p1", fakeDecl(t, "fake"), wrapper)
	s := connect(t, hp, sessionOpts{})
	pid, _ := strconv.Atoi(s.call(t, ctx, "fake__pid", nil))
	wpid, _ := strconv.Atoi(s.call(t, ctx, "wrapped__pid", nil))
	if pid == 0 || wpid == 0 || gone(pid) || gone(wpid) {
		t.Fatalf("servers not running: %d %d", pid, wpid)
	}
	if err := hp.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{pid, wpid} {
		if !gone(p) {
			t.Errorf("process %d is still there after Close", p)
		}
		// Killed members of the group are reaped by init a moment later.
		if !brokertest.Poll(5*time.Second, func() bool { return groupGone(p) }) {
			t.Errorf("process group %d still has members after Close", p)
		}
	}
	if n := len(pool.Processes()); n != 0 {
		t.Errorf("pool still supervises %d servers", n)
	}
}

// TestBrokerKill9LeavesNoServer: when the process hosting the pool dies by
// kill -9, its servers die with it (Pdeathsig on Linux; elsewhere their
// stdin reaches EOF and a stdio server exits).
func TestBrokerKill9LeavesNoServer(t *testing.T) {
	exe, _ := fakeCommand(t)
	helper := exec.Command(exe, "-test.run=^$")
	helper.Env = append(os.Environ(), "BERTH_HOSTED_HELPER=pool", "BERTH_HOSTED_COMMAND="+exe)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	var pid int
	select {
	case l := <-line:
		pid, _ = strconv.Atoi(l)
	case <-time.After(60 * time.Second):
		t.Fatal("the helper never reported its server")
	}
	if pid == 0 || gone(pid) {
		t.Fatalf("server pid %d not running", pid)
	}
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) }) // only if the test fails
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	if !brokertest.Poll(10*time.Second, func() bool { return gone(pid) && groupGone(pid) }) {
		t.Fatalf("server %d (or its group) survived kill -9 of the process hosting it", pid)
	}
}
