package systest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/peer/peertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shirou/gopsutil/v4/process"
)

// TestImportInsideARepositoryStaysInTheProject: `berth ide-config import
// vscode` run inside a cloned repository, without --project, puts the
// servers of the repository's .vscode/mcp.json into that project's config,
// where they wait for approval: not into the broker's config (trusted, in
// every project). The repository's file gets the portable Berth entry, no
// path of this machine.
func TestImportInsideARepositoryStaysInTheProject(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	ctx := testCtx(t, time.Minute)
	home := userHome(t)
	berthHome := brokertest.Home(t)
	mark := filepath.Join(t.TempDir(), "probe-ran")
	repo := brokertest.Project(t, "cloned", map[string]string{
		".vscode/mcp.json": fmt.Sprintf(`{"servers": {"probe": {"type": "stdio", "command": "sh", "args": ["-c", "touch %s; exec sleep 60"]}}}`, mark),
	})
	cmd := exec.Command(brokertest.Berth(t), "ide-config", "import", "vscode")
	cmd.Env, cmd.Dir = userEnv(home, api.HomeEnv+"="+berthHome), repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	cfg := filepath.Join(repo, api.ProjectDir, "config.yaml")
	mustContain(t, string(out), "imported 1 server(s) from "+filepath.Join(repo, ".vscode", "mcp.json")+" into "+cfg,
		"servers a project declares run only once you approve them", "berth servers approve "+repo)
	for _, brokerCfg := range []string{filepath.Join(berthHome, "config.yaml"), filepath.Join(userConfigDir(home), "berth", "config.yaml")} {
		if _, err := os.Stat(brokerCfg); err == nil {
			t.Errorf("the repository's server went into the broker's config %s", brokerCfg)
		}
	}
	raw := mustRead(t, filepath.Join(repo, ".vscode", "mcp.json"))
	for _, local := range []string{berthHome, home, brokertest.Binaries(t), api.HomeEnv} {
		if strings.Contains(string(raw), local) {
			t.Errorf("the repository's committed file now names %q of this machine:\n%s", local, raw)
		}
	}
	_, entries := readEntries(t, filepath.Join(repo, ".vscode", "mcp.json"), "servers")
	if e := entries["berth"]; e.Command != "berth-shim" || !slices.Equal(e.Args, []string{"--project", "${workspaceFolder}"}) {
		t.Errorf("the repository's Berth entry: %+v", e)
	}

	b := brokertest.StartBroker(t, brokertest.Options{Home: berthHome})
	other := brokertest.Project(t, "unrelated", nil)
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, other).URL})
	if slices.ContainsFunc(toolNames(toolsOf(t, ctx, s)), func(n string) bool { return strings.HasPrefix(n, "probe__") }) {
		t.Error("the repository's server is served in an unrelated project")
	}
	if list, _ := b.Client.Servers(ctx, other); len(list.Projects) == 1 && len(list.Projects[0].Servers) != 0 {
		t.Errorf("the unrelated project has servers: %+v", list.Projects[0].Servers)
	}
	b.Attach(t, repo)
	if st := serverStatus(t, ctx, b, repo, "probe"); st.State != api.ServerNeedsApproval || st.Origin != api.OriginProject {
		t.Errorf("the imported server is %+v, want it waiting for approval", st)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the repository's server ran")
	}
}

func toolsOf(t *testing.T, ctx context.Context, s *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// openDir makes a directory every account can enter and returns it: the
// temp folders above it let the second account through (traverse only).
func openDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/" && len(d) > len(os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestApproveRefusesWhatAnotherAccountCanWrite: a project whose server.js
// belongs to a second real account (or whose config others may write) is
// not approved without --other-writers, and the refusal says why; approved
// with it, the other account's edit of server.js is not run: the server
// waits for approval again.
func TestApproveRefusesWhatAnotherAccountCanWrite(t *testing.T) {
	t.Parallel()
	acct := peertest.Second(t)
	ctx := testCtx(t, 3*time.Minute)
	_, script := brokertest.NPMServer(t, "server-memory")
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := filepath.Join(openDir(t), "shared")
	if err := os.MkdirAll(filepath.Join(root, api.ProjectDir), 0o755); err != nil {
		t.Fatal(err)
	}
	serverJS := filepath.Join(root, "server.mjs")
	if err := os.WriteFile(serverJS, []byte(fmt.Sprintf("await import(%q);\n", script)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(serverJS, int(acct.UID), -1); err != nil {
		t.Fatal(err)
	}
	writeServers(t, root, fmt.Sprintf("  memory:\n    command: node\n    args: [server.mjs]\n    env: {MEMORY_FILE_PATH: %q}\n", filepath.Join(t.TempDir(), "g.jsonl")))

	_, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root})
	if !errors.Is(err, api.CodeOtherWriters) || !strings.Contains(err.Error(), serverJS+" belongs to uid "+fmt.Sprint(acct.UID)) {
		t.Fatalf("approving a file another account owns: %v", err)
	}
	out, code := berthCmd(t, b.Home, "servers", "approve", root)
	if code != 1 || !strings.Contains(out, "another account could change what runs as you") || !strings.Contains(out, "--other-writers") {
		t.Errorf("berth servers approve: %d\n%s", code, out)
	}
	if st := serverStatus(t, ctx, b, root, "memory"); st.State != api.ServerNeedsApproval {
		t.Fatalf("after the refusal memory is %+v", st)
	}
	// A config others may write is refused too.
	cfg := filepath.Join(root, api.ProjectDir, "config.yaml")
	os.Chmod(cfg, 0o666)
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); !errors.Is(err, api.CodeOtherWriters) || !strings.Contains(err.Error(), cfg+" is writable by other accounts") {
		t.Errorf("approving a config others may write: %v", err)
	}
	os.Chmod(cfg, 0o644)

	out, code = berthCmd(t, b.Home, "servers", "approve", "--other-writers", root)
	if code != 0 || !strings.Contains(out, "approved with --other-writers") {
		t.Fatalf("approve --other-writers: %d\n%s", code, out)
	}
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL})
	callText(t, ctx, s, "memory__read_graph", map[string]any{})
	pid := serverStatus(t, ctx, b, root, "memory").PID

	// The other account rewrites server.mjs (its own file): what it
	// writes must not run as the owner, even when the server crashes.
	mark := filepath.Join(t.TempDir(), "ran-as-owner")
	code2 := fmt.Sprintf("import {writeFileSync} from \"node:fs\";\nwriteFileSync(%q, String(process.getuid()));\nawait import(%q);\n", mark, script)
	edit := acct.Command(ctx, "sh", "-c", `cat > "$0"`, serverJS)
	edit.Stdin = strings.NewReader(code2)
	if out, err := edit.CombinedOutput(); err != nil {
		t.Fatalf("the other account's edit: %v %s", err, out)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL) // the guard may have stopped it already
	var st api.ServerStatus
	if !brokertest.Poll(brokertest.WaitLimit, func() bool {
		st = serverStatus(t, ctx, b, root, "memory")
		return st.State == api.ServerNeedsApproval && slices.Contains(st.Changed, "file server.mjs")
	}) {
		t.Fatalf("after the other account's edit: %+v", st)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the other account's code ran as the owner")
	}
}

// metaPages reads the page size and the two meta pages' transaction ids
// of the bbolt file at path (the layout docs/servers.md's salvage refers
// to: a meta page's header is 16 bytes, then magic, version, page size,
// ..., txid at 48).
func metaPages(t *testing.T, path string) (ps int, txids [2]uint64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps = int(binary.LittleEndian.Uint32(raw[16+8:]))
	for i := range 2 {
		txids[i] = binary.LittleEndian.Uint64(raw[i*ps+16+48:])
	}
	return ps, txids
}

// zeroPages writes zeros over the meta pages of path: both, or the newest.
func zeroPages(t *testing.T, path string, both bool) {
	t.Helper()
	ps, txids := metaPages(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	newest := 0
	if txids[1] > txids[0] {
		newest = 1
	}
	for i := range 2 {
		if both || i == newest {
			if _, err := f.WriteAt(make([]byte, ps), int64(i*ps)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDamagedDatabaseNeverRevivesARevokedServer: approve, revoke, stop,
// zero both meta pages of berth.db, start: the salvage does not bring the
// revoked approval back (the server waits for approval and does not run)
// and says approvals were withdrawn. One damaged meta page (the last
// transaction may be lost) is said, and withdraws the approvals; a 0-byte
// berth.db is said; berth.db.corrupt-* copies are pruned to the newest 3.
func TestDamagedDatabaseNeverRevivesARevokedServer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	home := brokertest.Home(t)
	root, script := memoryProject(t, "revoked", filepath.Join(t.TempDir(), "graph.jsonl"))
	db := filepath.Join(home, api.DBName)
	start := func() (*brokertest.Broker, string) {
		t.Helper()
		b := brokertest.StartBroker(t, brokertest.Options{Home: home})
		h, err := b.Client.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return b, strings.Join(h.Warnings, "\n")
	}
	stop := func(b *brokertest.Broker) {
		t.Helper()
		if err := b.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
	waits := func(b *brokertest.Broker) {
		t.Helper()
		if st := serverStatus(t, ctx, b, root, "memory"); st.State != api.ServerNeedsApproval {
			t.Errorf("memory is %+v, want it waiting for approval", st)
		}
		s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL})
		if hasMemoryTools(t, ctx, s) || len(serverProcesses(t, home, script)) != 0 {
			t.Error("the server runs without an approval")
		}
		s.Close()
	}

	b, _ := start()
	for _, cmd := range [][]string{{"servers", "approve", root}, {"servers", "revoke", root}} {
		if out, code := berthCmd(t, home, cmd...); code != 0 {
			t.Fatalf("berth %v: %d\n%s", cmd, code, out)
		}
	}
	stop(b)
	zeroPages(t, db, true)
	b, warnings := start()
	if !strings.Contains(warnings, "was corrupt") || !strings.Contains(warnings, "server approvals were withdrawn") {
		t.Errorf("the salvage does not say approvals were withdrawn:\n%s", warnings)
	}
	waits(b)

	// One damaged meta page: opened a transaction older, said, approvals withdrawn.
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	b.Attach(t, brokertest.Project(t, "later", nil)) // a transaction after the approval
	stop(b)
	zeroPages(t, db, false)
	b, warnings = start()
	if !strings.Contains(warnings, "had one of its two header (meta) pages damaged") || !strings.Contains(warnings, "the server approvals of 1 projects were withdrawn") {
		t.Errorf("one damaged meta page:\n%s", warnings)
	}
	raw, _ := os.ReadFile(filepath.Join(home, api.LogName))
	if !strings.Contains(string(raw), "meta) pages damaged") {
		t.Error("the broker log does not say a meta page was damaged")
	}
	waits(b)

	// A 0-byte file is said.
	stop(b)
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	b, warnings = start()
	if !strings.Contains(warnings, "was empty (0 bytes)") {
		t.Errorf("a 0-byte berth.db:\n%s", warnings)
	}

	// Corrupt copies are pruned to the newest three.
	stop(b)
	for i := range 5 {
		if err := os.WriteFile(fmt.Sprintf("%s.corrupt-2020010%dT000000.000Z", db, i+1), []byte("old copy"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(db, []byte(strings.Repeat("not a bbolt file ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, warnings = start()
	copies, _ := filepath.Glob(db + ".corrupt-*")
	// Seven copies in all (the salvage above made one): the four oldest go.
	if len(copies) != 3 || !strings.Contains(warnings, "removed 4 older corrupt copies") || slices.ContainsFunc(copies, func(c string) bool { return strings.Contains(c, "2020010") && !strings.Contains(c, "20200105") }) {
		t.Errorf("corrupt copies after a sixth: %v\n%s", copies, warnings)
	}
}

// TestServerFilesystemStaysInItsFolder: the real server-filesystem given
// args [DIR/src] through Berth lists and reads src only (Berth answers its
// roots/list with the folder its args name, not the project root); it
// reaches the project root only once the definition says so (roots: [.]),
// which needs a new approval. A tools.allow removed after the approval
// serves no more tools until approved again, and berth servers says so.
func TestServerFilesystemStaysInItsFolder(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 3*time.Minute)
	node, fsScript := brokertest.NPMServer(t, "server-filesystem")
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "limited", map[string]string{"src/ok.txt": "inside src\n", "secret.txt": "outside src\n"})
	src := filepath.Join(root, "src")
	decl := fmt.Sprintf("  fs:\n    command: %q\n    args: [%q, %q]\n", node, fsScript, src)
	writeServers(t, root, decl+"    tools: {allow: [list_allowed_directories, read_text_file]}\n")
	out, code := berthCmd(t, b.Home, "servers", "approve", root)
	if code != 0 {
		t.Fatalf("approve: %d\n%s", code, out)
	}
	mustContain(t, out, "roots    "+src+"  (the folders its args name; answered to its roots/list)")
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL})
	read := func(path string) (string, bool) {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fs__read_text_file", Arguments: map[string]any{"path": path}})
		if err != nil {
			return err.Error(), false
		}
		return brokertest.ResultText(res), !res.IsError
	}
	// The server asks for roots after it starts: give it the time to.
	var dirs string
	if !brokertest.Poll(20*time.Second, func() bool {
		dirs = callText(t, ctx, s, "fs__list_allowed_directories", map[string]any{})
		return strings.Contains(serverLog(t, b.Home), "Updated allowed directories from MCP roots")
	}) {
		t.Logf("server-filesystem never logged a roots update; allowed: %s", dirs)
	}
	dirs = callText(t, ctx, s, "fs__list_allowed_directories", map[string]any{})
	if !strings.Contains(dirs, src) || slices.Contains(strings.Fields(dirs), root) {
		t.Errorf("allowed directories through Berth: %q, want %s only", dirs, src)
	}
	if text, ok := read(filepath.Join(src, "ok.txt")); !ok || !strings.Contains(text, "inside src") {
		t.Errorf("reading src/ok.txt: %v %q", ok, text)
	}
	if text, ok := read(filepath.Join(root, "secret.txt")); ok || !strings.Contains(text, "Access denied") {
		t.Errorf("reading the project root's secret.txt through Berth: %v %q, want access denied", ok, text)
	}

	// tools.allow removed: no new tool until approved again, and said.
	writeServers(t, root, decl)
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { return serverStatus(t, ctx, b, root, "fs").Withheld > 0 }) {
		t.Fatalf("after removing tools.allow: %+v", serverStatus(t, ctx, b, root, "fs"))
	}
	if hasTool(toolsOf(t, ctx, s), "fs__write_file") {
		t.Error("removing tools.allow served write_file without a new approval")
	}
	out, _ = berthCmd(t, b.Home, "servers", "--project", root)
	mustContain(t, out, "tools it offers are withheld: its tools filter was widened since the approval")

	// The user widens it on purpose: roots: [.], approved again.
	writeServers(t, root, decl+"    roots: [.]\n")
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { return serverStatus(t, ctx, b, root, "fs").State == api.ServerNeedsApproval }) {
		t.Fatal("a roots setting did not need a new approval")
	}
	if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, "the project root is readable once the definition says so and is approved", func() bool {
		text, ok := read(filepath.Join(root, "secret.txt"))
		return ok && strings.Contains(text, "outside src")
	})
}

// serverLog is the broker's log.
func serverLog(t *testing.T, home string) string {
	raw, _ := os.ReadFile(filepath.Join(home, api.LogName))
	return string(raw)
}

// sleepers lists the live processes whose command line holds marker.
func sleepers(t *testing.T, marker string) []int {
	t.Helper()
	procs, err := process.Processes()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range procs {
		if cmd, err := p.Cmdline(); err == nil && strings.Contains(cmd, marker) {
			if st, err := p.Status(); err == nil && slices.Contains(st, process.Zombie) {
				continue
			}
			pids = append(pids, int(p.Pid))
		}
	}
	return pids
}

// orphanCalls counts the calls of orphanProject.
var orphanCalls atomic.Int32

// orphanProject declares a server-memory started by a shell that leaves
// three sleepers behind: one in the server's process group, one that
// leaves it (setsid), and one that leaves it with its environment cleared.
// It returns the project and the sleepers' command-line markers.
func orphanProject(t *testing.T) (root string, inGroup, setsid, cleared string) {
	t.Helper()
	node, script := brokertest.NPMServer(t, "server-memory")
	setsidPath, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("setsid is not installed")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	// Markers of this test process (its pid) and of this call of it: the
	// subtests run beside each other.
	n := fmt.Sprintf("%04d%d", os.Getpid()%1000+1, orphanCalls.Add(1)%10)
	inGroup, setsid, cleared = "3601."+n, "3602."+n, "3603."+n
	// The markers as they are now: the return below sets the named
	// results to the sleepers' commands.
	markers := []string{inGroup, setsid, cleared}
	t.Cleanup(func() {
		for _, m := range markers {
			for _, pid := range sleepers(t, "sleep "+m) {
				brokertest.KillPID(pid)
			}
		}
	})
	sh := fmt.Sprintf("%[1]s %[2]s & %[3]s %[1]s %[4]s & env -i %[3]s %[1]s %[5]s & exec %[6]q %[7]q", sleep, inGroup, setsidPath, setsid, cleared, node, script)
	root = brokertest.Project(t, "orphans", nil)
	writeServers(t, root, fmt.Sprintf("  memory:\n    command: sh\n    args: [-c, %q]\n    env: {MEMORY_FILE_PATH: %q}\n", sh, filepath.Join(t.TempDir(), "g.jsonl")))
	return root, "sleep " + inGroup, "sleep " + setsid, "sleep " + cleared
}

// TestHostedServersLeaveNoOrphans: what a hosted server starts ends with
// it. A clean stop of the broker ends the server's background child, a
// grandchild that called setsid, and one that also cleared its
// environment (Linux: the broker is their subreaper). After a kill -9 of
// the broker, the background child and the setsid grandchild survive it,
// and the next broker of the same home ends them (the recorded process
// group, and the processes tagged by that home).
func TestHostedServersLeaveNoOrphans(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"clean stop", "kill -9"} { // beside each other, each on a home of its own
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 2*time.Minute)
			home := brokertest.Home(t)
			root, inGroup, setsid, cleared := orphanProject(t)
			b := brokertest.StartBroker(t, brokertest.Options{Home: home})
			if _, err := b.Client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
				t.Fatal(err)
			}
			s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL})
			callText(t, ctx, s, "memory__read_graph", map[string]any{})
			brokertest.Eventually(t, "the three sleepers run", func() bool {
				return len(sleepers(t, inGroup)) == 1 && len(sleepers(t, setsid)) == 1 && len(sleepers(t, cleared)) == 1
			})
			leader := serverStatus(t, ctx, b, root, "memory").PID
			s.Close()
			if how == "clean stop" {
				if err := b.Stop(t); err != nil {
					t.Fatal(err)
				}
				for _, m := range []string{inGroup, setsid, cleared} {
					if !brokertest.Poll(brokertest.WaitLimit, func() bool { return len(sleepers(t, m)) == 0 }) {
						t.Errorf("%q survived a clean stop of the broker", m)
					}
				}
				return
			}
			b.Kill(t)
			if !brokertest.WaitGone(leader, brokertest.WaitLimit) { // the parent-death signal ends the server
				t.Fatalf("the server %d outlived the broker", leader)
			}
			for _, m := range []string{inGroup, setsid} {
				if len(sleepers(t, m)) != 1 {
					t.Fatalf("%q did not survive the kill -9: the test proves nothing", m)
				}
			}
			var rec []json.RawMessage
			if raw, err := os.ReadFile(filepath.Join(home, "servers.pids")); err != nil || json.Unmarshal(raw, &rec) != nil || len(rec) != 1 {
				t.Errorf("the record of server processes after kill -9: %s %v", raw, err)
			}
			brokertest.StartBroker(t, brokertest.Options{Home: home})
			for _, m := range []string{inGroup, setsid} {
				if !brokertest.Poll(brokertest.WaitLimit, func() bool { return len(sleepers(t, m)) == 0 }) {
					t.Errorf("%q left by the killed broker survived the next one", m)
				}
			}
			if !strings.Contains(serverLog(t, home), "ended hosted server processes a previous broker left running") {
				t.Errorf("the next broker did not say what it ended:\n%s", serverLog(t, home))
			}
		})
	}
}
