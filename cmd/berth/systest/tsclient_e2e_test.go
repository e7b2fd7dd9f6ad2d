package systest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/brokertest/ci"
	"github.com/google/jsonschema-go/jsonschema"
)

// tsClientDir holds the TypeScript SDK client and its package-lock.json.
const tsClientDir = "testdata/tsclient"

// needTSClient returns the node binary, or ends the test (brokertest.NodeModules).
func needTSClient(t *testing.T) string {
	t.Helper()
	return brokertest.NodeModules(t, tsClientDir, filepath.Join("@modelcontextprotocol", "sdk"), "the TypeScript MCP SDK")
}

// runTSScript runs node on script of tsClientDir with args (and the
// environment env adds, if any) and returns its stdout, or ends the test
// with its stdout and stderr.
func runTSScript(t *testing.T, ctx context.Context, node string, env []string, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = tsClientDir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s %s: %v\nstdout: %s\nstderr: %s", script, strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// shimEnv is the environment in which a script's berth-shim reaches b.
func shimEnv(t *testing.T, b *brokertest.Broker) []string {
	return []string{"BERTH_HOME=" + b.Home, "PATH=" + brokertest.Binaries(t) + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// TestTypeScriptSDKReachesEveryTransport runs the guide's connect.mjs with
// the official TypeScript SDK over streamable HTTP, SSE, WebSocket (with the
// token the state file carries) and stdio through berth-shim.
func TestTypeScriptSDKReachesEveryTransport(t *testing.T) {
	t.Parallel()
	node := needTSClient(t)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--auth", "token"}})
	root := brokertest.Project(t, "tsclient", nil)
	if out, code := berthCmd(t, b.Home, "attach", root); code != 0 {
		t.Fatalf("berth attach: %d %s", code, out)
	}
	for _, tc := range []struct{ arg, transport string }{
		{"http", "http"}, {"sse", "sse"}, {"websocket", "websocket"}, {"stdio", "stdio"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			runTSClient(t, node, b, "connect.mjs", root, tc.arg, tc.transport)
		})
	}
}

// runTSClient runs script (connect.mjs) of tsClientDir for root over arg,
// and checks that it listed the tools and that get_server_info named
// root, transport and b's pid. It returns the tools.
func runTSClient(t *testing.T, node string, b *brokertest.Broker, script, root, arg, transport string) []string {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	return checkTSClient(t, b, root, transport, runTSScript(t, ctx, node, shimEnv(t, b), script, root, arg))
}

// linesBy splits the output of script, a JSON object a line, by the
// string field key of each line.
func linesBy(t *testing.T, script string, out []byte, key string) map[string][]byte {
	t.Helper()
	lines := map[string][]byte{}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var l map[string]any
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("%s printed %q: %v", script, line, err)
		}
		k, _ := l[key].(string)
		lines[k] = line
	}
	return lines
}

// checkTSClient checks one client's line of output: the tools it listed,
// and get_server_info naming root, transport and b's pid. It returns the
// tools.
func checkTSClient(t *testing.T, b *brokertest.Broker, root, transport string, out []byte) []string {
	t.Helper()
	var got struct {
		Tools []string   `json:"tools"`
		Info  serverInfo `json:"info"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, out)
	}
	if !slices.Contains(got.Tools, "get_server_info") || !slices.Contains(got.Tools, "search_standards") {
		t.Errorf("tools/list = %v", got.Tools)
	}
	if got.Info.Project.Root != root || got.Info.Server.Transport != transport || got.Info.Server.PID != b.PID() {
		t.Errorf("get_server_info = %+v, want root %s transport %s pid %d", got.Info, root, transport, b.PID())
	}
	return got.Tools
}

// TestSubAgentGuideShowsTheTestedClients keeps the guide's TypeScript and
// Go snippets identical to the programs the tests run.
func TestSubAgentGuideShowsTheTestedClients(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "sub-agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ lang, file string }{
		{"js", filepath.Join(tsClientDir, "connect.mjs")},
		{"go", filepath.Join("testdata", "goclient", "main.go")},
	} {
		src, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(src), "\n")
		open := "```" + tc.lang + "\n" + first + "\n"
		i := bytes.Index(doc, []byte(open))
		if i < 0 {
			t.Errorf("docs/sub-agents.md has no ```%s block starting with %s's first line: copy the file into the guide", tc.lang, tc.file)
			continue
		}
		block := doc[i+len("```"+tc.lang+"\n"):]
		end := bytes.Index(block, []byte("\n```\n"))
		if end < 0 {
			t.Errorf("the ```%s block in docs/sub-agents.md is not closed", tc.lang)
			continue
		}
		if got, want := string(block[:end+1]), string(src); got != want {
			t.Errorf("docs/sub-agents.md differs from %s: copy the file into the guide\n%s", tc.file, firstDiff(want, got))
		}
	}
}

// TestGoSDKGuideClientReachesTheProject builds and runs the guide's go-sdk
// client against a broker with auth on.
func TestGoSDKGuideClientReachesTheProject(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--auth", "token"}})
	root := brokertest.Project(t, "goclient", nil)
	if out, code := berthCmd(t, b.Home, "attach", root); code != 0 {
		t.Fatalf("berth attach: %d %s", code, out)
	}
	bin := filepath.Join(t.TempDir(), "goclient")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/goclient").CombinedOutput(); err != nil {
		t.Fatalf("build the guide's Go client: %v\n%s", err, out)
	}
	ctx := testCtx(t, 60*time.Second)
	out, err := exec.CommandContext(ctx, bin, root).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("goclient: %v\n%s%s", err, out, stderr)
	}
	var got struct {
		Tools []string   `json:"tools"`
		Info  serverInfo `json:"info"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, out)
	}
	if !slices.Contains(got.Tools, "get_server_info") || got.Info.Project.Root != root || got.Info.Server.Transport != "http" || got.Info.Server.PID != b.PID() {
		t.Fatalf("goclient saw %+v", got)
	}
}

// firstDiff names the first line where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  file: %s\n  doc:  %s", i+1, wl, gl)
		}
	}
	return ""
}

// TestSubAgentGuideCurlSessionWorks runs the guide's curl block against a
// broker with auth on: initialize, the Mcp-Session-Id dance, a tool call and
// DELETE, from the project's directory as the guide says.
func TestSubAgentGuideCurlSessionWorks(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			ci.Unavailable(t, "%s is not installed (.ci/run installs it)", tool)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "sub-agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "### curl")
	if !ok {
		t.Fatal("docs/sub-agents.md has no curl section")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	script, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("the curl section of docs/sub-agents.md has no closed ```sh block")
	}
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--auth", "token"}})
	root := brokertest.Project(t, "curl", nil)
	if out, code := berthCmd(t, b.Home, "attach", root); code != 0 {
		t.Fatalf("berth attach: %d %s", code, out)
	}
	ctx := testCtx(t, 60*time.Second)
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the guide's curl block: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"transport":"http"`) || !strings.Contains(string(out), `"root":"`+root+`"`) {
		t.Fatalf("the guide's curl block printed no get_server_info result for %s:\n%s", root, out)
	}
	// DELETE ended the session: none is left (bounded wait).
	sessions := -1
	brokertest.Poll(5*time.Second, func() bool {
		p, err := b.Client.Project(ctx, api.ProjectID(root))
		if err != nil {
			t.Fatal(err)
		}
		sessions = p.Sessions
		return sessions == 0
	})
	if sessions != 0 {
		t.Errorf("%d sessions left after the guide's DELETE", sessions)
	}
}

// TestTypeScriptSDKGetsAnswersAndProgressOverHTTP: the TypeScript SDK on a
// project's HTTP port, calling a hosted server-everything. A call that
// sends nothing before its answer is answered with one JSON body; a long
// call's progress notifications all arrive, before its answer, on the SSE
// stream of its POST (not on the session's GET stream, which a client need
// not open); and the session carries on.
func TestTypeScriptSDKGetsAnswersAndProgressOverHTTP(t *testing.T) {
	t.Parallel()
	tsNode := needTSClient(t)
	ctx := testCtx(t, 2*time.Minute)
	_, _, url := everythingProject(t, ctx, "tsprogress")
	out := runTSScript(t, ctx, tsNode, nil, "progress.mjs", url)
	var got struct {
		Echoes    []string  `json:"echoes"`
		Progress  []float64 `json:"progress"`
		Long      string    `json:"long"`
		LongError bool      `json:"longError"`
		Order     []string  `json:"order"`
		After     string    `json:"after"`
		Types     []string  `json:"types"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, out)
	}
	for i, e := range got.Echoes {
		if want := fmt.Sprintf("ping %d", i); !strings.Contains(e, want) {
			t.Errorf("echo %d = %q, want it to contain %q", i, e, want)
		}
	}
	if len(got.Echoes) != 3 || !strings.Contains(got.After, "after") {
		t.Errorf("echoes %q, after the long call %q", got.Echoes, got.After)
	}
	if !slices.Equal(got.Progress, []float64{1, 2, 3}) || !slices.Equal(got.Order, []string{"progress", "progress", "progress", "answer"}) {
		t.Errorf("progress %v in the order %v, want 1, 2, 3 before the answer", got.Progress, got.Order)
	}
	if got.LongError || got.Long == "" {
		t.Errorf("the long call's answer: %q (error %v)", got.Long, got.LongError)
	}
	// initialize (a stream: the go-sdk primes it with an event id for the
	// client's 2025-11-25), 3 echoes (JSON), the long call (a stream: its
	// progress, then its answer), the last echo (JSON).
	const sse, json1 = "text/event-stream", "application/json"
	want := []string{sse, json1, json1, json1, sse, json1}
	if !slices.Equal(got.Types, want) {
		t.Errorf("media types of the answers %v, want %v", got.Types, want)
	}
}

// TestTypeScriptSDKCompletesSubscribesAndHearsHostedLogs: the TypeScript
// SDK, on a project port hosting server-everything, completes a hosted
// prompt's arguments (the second from the first, through the context),
// subscribes to one of the server's resources and hears its update, and
// hears the server's log messages once it set a level; it leaves without
// DELETE.
func TestTypeScriptSDKCompletesSubscribesAndHearsHostedLogs(t *testing.T) {
	t.Parallel()
	tsNode := needTSClient(t)
	ctx := testCtx(t, 2*time.Minute)
	_, _, url := everythingProject(t, ctx, "tsextras")
	out := runTSScript(t, ctx, tsNode, nil, "hostedextras.mjs", url)
	var got struct {
		Completions bool     `json:"completions"`
		Department  []string `json:"department"`
		Names       []string `json:"names"`
		Updated     bool     `json:"updated"`
		Logger      string   `json:"logger"`
		LogData     string   `json:"logData"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, out)
	}
	if !got.Completions || !slices.Equal(got.Department, []string{"Engineering"}) || !slices.Equal(got.Names, []string{"Alice", "Bob", "Charlie"}) {
		t.Errorf("completions: capability %v, department %q, names %q", got.Completions, got.Department, got.Names)
	}
	if !got.Updated {
		t.Error("no notifications/resources/updated for the subscribed resource within 30s")
	}
	if got.Logger != "everything" || got.LogData == "" {
		t.Errorf("log message: logger %q, data %q; want server-everything's under \"everything\"", got.Logger, got.LogData)
	}
}

// TestTypeScriptSDKCompletesWhereNothingMatches: completion/complete
// answers values as an array even where nothing matches (a workflow
// prompt's target_file, an argument the prompt lacks, a hosted prompt's
// argument), so the TypeScript SDK's client.complete(), which checks the
// answer against the specification, returns no values instead of
// throwing; and a match is still found.
func TestTypeScriptSDKCompletesWhereNothingMatches(t *testing.T) {
	t.Parallel()
	tsNode := needTSClient(t)
	ctx := testCtx(t, 2*time.Minute)
	node, script := brokertest.NPMServer(t, "server-everything")
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "nomatch", map[string]string{"README.md": "# nomatch\n"})
	writeWorkflows(t, root)
	writeServers(t, root, fmt.Sprintf("  everything:\n    command: %q\n    args: [%q, stdio]\n", node, script))
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	url := b.Attach(t, root).URL
	out := runTSScript(t, ctx, tsNode, nil, "complete.mjs", url, "bug_fix_v1", "everything__completable-prompt")
	type answer struct {
		Values *[]string `json:"values"`
		Error  string    `json:"error"`
	}
	var got map[string]answer
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, out)
	}
	for name, want := range map[string][]string{"target": {}, "other": {}, "hosted": {}, "matched": {"README.md"}} {
		a := got[name]
		if a.Error != "" || a.Values == nil || !slices.Equal(*a.Values, want) {
			t.Errorf("%s: the TypeScript SDK's complete() gave values %v, error %q; want %q", name, a.Values, a.Error, want)
		}
	}
}

// TestTypeScriptSDKInFinderMode: the TypeScript SDK asks for finder mode
// over streamable HTTP (?tools=finder) and over stdio (berth-shim --tools
// finder) on a project that lists every tool by default and promotes
// called tools. Its listing holds the finder and not the hosted tools;
// find_tools ranks server-everything's long operation first with its
// schema; call_tool runs it with progress, adds it to the session's
// listing with notifications/tools/list_changed, and is cancelled by the
// client mid-call without disturbing the server; schema-invalid arguments
// get the schema validator's own message; a tool of a server awaiting
// approval answers the approve command.
func TestTypeScriptSDKInFinderMode(t *testing.T) {
	t.Parallel()
	tsNode := needTSClient(t)
	ctx := testCtx(t, 4*time.Minute)
	node, everything := brokertest.NPMServer(t, "server-everything")
	_, memory := brokertest.NPMServer(t, "server-memory")
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "tsfinder", nil)
	config := fmt.Sprintf("finder:\n  promote: true\nservers:\n  everything:\n    command: %q\n    args: [%q, stdio]\n    start: eager\n"+
		"  memory:\n    command: %q\n    args: [%q]\n    env: {MEMORY_FILE_PATH: %q}\n",
		node, everything, node, memory, filepath.Join(t.TempDir(), "graph.jsonl"))
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root, Servers: []string{"everything"}}); err != nil {
		t.Fatal(err)
	}
	url := b.Attach(t, root).URL
	// find_tools ranks the tools of running servers (a lazy one's once it
	// ran): wait until everything answers.
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { return serverStatus(t, ctx, b, root, "everything").State == api.ServerRunning }) {
		t.Fatalf("server-everything is not running: %+v", serverStatus(t, ctx, b, root, "everything"))
	}
	approve := "berth servers approve " + root
	// Both clients, one after the other, in one Node process.
	wheres := []string{url, "stdio"}
	all := runTSScript(t, ctx, tsNode, shimEnv(t, b), "finder.mjs", append([]string{root}, wheres...)...)
	outs := linesBy(t, "finder.mjs", all, "where")
	for _, where := range wheres {
		t.Run(strings.SplitN(where, ":", 2)[0], func(t *testing.T) {
			out := outs[where]
			if out == nil {
				t.Fatalf("finder.mjs printed nothing for %s:\n%s", where, all)
			}
			var got struct {
				Before, After []string
				Found         []struct {
					Name   string
					Schema json.RawMessage
				}
				Progress      []float64
				Long          string
				LongError     bool
				Changed       int
				Cancelled     string
				CancelSeconds float64
				Echo          string
				Bad           struct {
					IsError bool
					Text    string
				}
				Unapproved string
				EchoSchema json.RawMessage
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("output is not the expected JSON: %v\n%s", err, out)
			}
			const long = "everything__trigger-long-running-operation"
			if !slices.Contains(got.Before, "find_tools") || !slices.Contains(got.Before, "call_tool") || !slices.Contains(got.Before, "get_server_info") ||
				slices.ContainsFunc(got.Before, func(n string) bool { return strings.Contains(n, "__") }) {
				t.Errorf("finder listing = %v, want the core tools with find_tools and call_tool and no hosted tool", got.Before)
			}
			if len(got.Found) == 0 || got.Found[0].Name != long || !strings.Contains(string(got.Found[0].Schema), `"steps"`) {
				t.Errorf("find_tools = %+v, want %s first with its schema", got.Found, long)
			}
			if !slices.Equal(got.Progress, []float64{1, 2, 3}) || got.LongError || got.Long == "" {
				t.Errorf("call_tool %s: progress %v, answer %q (error %v)", long, got.Progress, got.Long, got.LongError)
			}
			if got.Changed == 0 || !slices.Contains(got.After, long) || len(got.After) != len(got.Before)+1 {
				t.Errorf("after the call: %d tools/list_changed, listing %v; want %s added to %v", got.Changed, got.After, long, got.Before)
			}
			if !strings.Contains(got.Cancelled, "changed their mind") || got.CancelSeconds > 60 {
				t.Errorf("the cancelled call: %q after %.1fs, want the abort's reason well before the 120s operation ends", got.Cancelled, got.CancelSeconds)
			}
			if !strings.Contains(got.Echo, "after the cancel") {
				t.Errorf("call_tool after the cancel: %q", got.Echo)
			}
			if st := serverStatus(t, ctx, b, root, "everything"); st.State != api.ServerRunning || st.Restarts != 0 {
				t.Errorf("the cancel disturbed the server: %+v", st)
			}
			if want := schemaMessage(t, got.EchoSchema, `{"message": 5}`); !got.Bad.IsError || !strings.Contains(got.Bad.Text, want) {
				t.Errorf("call_tool with a number for echo's message: %+v, want a tool error with %q", got.Bad, want)
			}
			if !strings.Contains(got.Unapproved, approve) {
				t.Errorf("call_tool of the unapproved memory server: %q, want it to name %q", got.Unapproved, approve)
			}
		})
	}
}

// schemaMessage is what the JSON Schema validator says of args (as JSON
// decodes them) against schema.
func schemaMessage(t *testing.T, schema json.RawMessage, args string) string {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve %s: %v", schema, err)
	}
	var instance any
	if err := json.Unmarshal([]byte(args), &instance); err != nil {
		t.Fatal(err)
	}
	err = resolved.Validate(instance)
	if err == nil {
		t.Fatalf("%s matches %s", args, schema)
	}
	return err.Error()
}

// TestBadToolsListingIsRefusedWithTheValues: a project URL with a tools=
// that is not a mode answers 400 naming the modes, and berth-shim --tools
// with one exits with a usage error naming them.
func TestBadToolsListingIsRefusedWithTheValues(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "badtools", nil)
	url := b.Attach(t, root).URL
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"?"+api.ToolsParam+"=some", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `tools="some": use all, finder or auto`) {
		t.Errorf("POST ?tools=some: %d %q, want 400 naming all, finder and auto", resp.StatusCode, body)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(brokertest.Binaries(t), "berth-shim"), "--project", root, "--tools", "some")
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 2 || !strings.Contains(string(out), `--tools "some": use all, finder or auto`) {
		t.Errorf("berth-shim --tools some: exit %d %v %q, want 2 naming all, finder and auto", code, err, out)
	}
}
