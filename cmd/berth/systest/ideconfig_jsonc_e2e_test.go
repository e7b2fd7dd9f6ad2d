package systest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/config"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// jsoncDir holds VS Code's JSONC parser (jsonc-parser) and its lock file.
const jsoncDir = "testdata/jsonc"

// readAsIDE reads path as VS Code reads its mcp.json (jsonc-parser, comments
// and trailing commas allowed) and returns the servers under key.
func readAsIDE(t *testing.T, path, key string) map[string]json.RawMessage {
	t.Helper()
	node := brokertest.NodeModules(t, jsoncDir, "jsonc-parser", "VS Code's JSONC parser")
	out, err := exec.Command(node, filepath.Join(jsoncDir, "check.mjs"), path).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		raw, _ := os.ReadFile(path)
		t.Fatalf("jsonc-parser cannot read %s (%v): %s\n%s", path, err, stderr, raw)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out, &top); err != nil {
		t.Fatal(err)
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(top[key], &servers); err != nil {
		t.Fatalf("%s: %q: %v", path, key, err)
	}
	return servers
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// backups lists the backups ide-config left of path: beside it (a
// user's own file), or in the backups folder of berthHome (a project's
// file, whose backups must not pile up in the repository).
func backups(t *testing.T, berthHome, path string) []string {
	t.Helper()
	beside, err := filepath.Glob(path + ".berth-backup-*")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(path)) // the folder names each file by its name and a hash of its path
	kept, err := filepath.Glob(filepath.Join(berthHome, "backups", "*", filepath.Base(path)+"-"+hex.EncodeToString(sum[:4])+".berth-backup-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(beside) > 0 && len(kept) > 0 {
		t.Errorf("backups of %s both beside it %v and in %s %v", path, beside, berthHome, kept)
	}
	return append(beside, kept...)
}

const vscodeWithComments = `// Servers for this repository.
{
	"inputs": [
		{"type": "promptString", "id": "gh-token", "password": true}, // asked once
	],
	"servers": {
		/* GitHub's server, in a container */
		"github": {
			"type": "stdio",
			"command": "docker",
			"args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server",],
		},
	},
}
`

const cursorWithComments = `{
  // Cursor's global MCP servers
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}, // notes
  },
}
`

// TestIDEConfigWriteKeepsCommentsOfVSCodeAndCursorFiles: --write merges
// into files with comments and trailing commas (which the IDEs accept),
// keeps every other line as it was, backs the file up, and the result
// still reads by the IDE's rules and runs.
func TestIDEConfigWriteKeepsCommentsOfVSCodeAndCursorFiles(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "shop", nil)
	env := userEnv(home, "BERTH_HOME="+b.Home)
	shim := brokertest.Shim(t)
	for _, tc := range []struct {
		app, file, key, name, before string
		args                         []string
		want                         ideEntry
	}{
		{"vscode", filepath.Join(root, ".vscode", "mcp.json"), "servers", "berth", vscodeWithComments, []string{"--project", root},
			ideEntry{Type: "stdio", Command: shim, Args: []string{"--project", root}, Env: map[string]string{"BERTH_HOME": b.Home}}},
		{"cursor", filepath.Join(home, ".cursor", "mcp.json"), "mcpServers", "berth", cursorWithComments, nil,
			ideEntry{Command: shim, Args: []string{"--project", "${workspaceFolder}"}, Env: map[string]string{"BERTH_HOME": b.Home}}},
	} {
		t.Run(tc.app, func(t *testing.T) {
			writeFile(t, tc.file, tc.before)
			out, code := runAs(t, env, append(append([]string{"ide-config", tc.app}, tc.args...), "--write")...)
			bk := backups(t, b.Home, tc.file)
			if code != 0 || len(bk) != 1 || !strings.Contains(out, "set server \"berth\" in "+tc.file+", keeping the rest (the file as it was is in "+bk[0]+")") {
				t.Fatalf("--write: exit %d, backups %v\n%s", code, bk, out)
			}
			if raw, _ := os.ReadFile(bk[0]); string(raw) != tc.before {
				t.Errorf("the backup is not the file as it was:\n%s", raw)
			}
			after, _ := os.ReadFile(tc.file)
			// Every line of the user's file is still there, in order.
			rest := string(after)
			for _, line := range strings.Split(strings.TrimSpace(tc.before), "\n") {
				i := strings.Index(rest, line)
				if i < 0 {
					t.Fatalf("line %q of the user's file is gone or moved:\n%s", line, after)
				}
				rest = rest[i+len(line):]
			}
			servers := readAsIDE(t, tc.file, tc.key)
			var got ideEntry
			if err := json.Unmarshal(servers[tc.name], &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("entry (-want +got):\n%s", d)
			}
			if len(servers) != 2 {
				t.Errorf("servers %v: the user's server is lost or doubled", servers)
			}
			// Again: nothing changes, no new backup.
			if out, code := runAs(t, env, append(append([]string{"ide-config", tc.app}, tc.args...), "--write")...); code != 0 || !strings.Contains(out, "nothing to change") || len(backups(t, b.Home, tc.file)) != 1 {
				t.Errorf("second --write: exit %d\n%s", code, out)
			}
		})
	}
}

// TestIDEConfigPortableAndTheHint: --portable writes a project file with
// no path of this machine, which runs from the IDE's workspace variable and
// PATH; the printed hint repeats every flag given.
func TestIDEConfigPortableAndTheHint(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "team", nil)
	env := shimOnPath(t, userEnv(home))

	cmd := exec.Command(brokertest.Berth(t), "ide-config", "vscode", "--project", root, "--name", "team tools", "--portable")
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err, stderr.String())
	}
	file := filepath.Join(root, ".vscode", "mcp.json")
	hint := "VS Code reads this from " + file + " (under \"servers\"); `berth ide-config vscode --project " + root + " --name 'team tools' --portable --write` merges it there.\n"
	if stderr.String() != hint {
		t.Errorf("hint:\n%q\nwant\n%q", stderr.String(), hint)
	}
	if out, code := runAs(t, env, "ide-config", "vscode", "--project", root, "--name", "team tools", "--portable", "--write"); code != 0 {
		t.Fatalf("--portable --write: exit %d\n%s", code, out)
	}
	raw, _ := os.ReadFile(file)
	if strings.Contains(string(raw), root) || strings.Contains(string(raw), home) || strings.Contains(string(raw), brokertest.Binaries(t)) {
		t.Fatalf("the portable file names a path of this machine:\n%s", raw)
	}
	var e ideEntry
	if err := json.Unmarshal(readAsIDE(t, file, "servers")["team tools"], &e); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ideEntry{Type: "stdio", Command: "berth-shim", Args: []string{"--project", "${workspaceFolder}"}}, e); d != "" {
		t.Fatalf("portable entry (-want +got):\n%s", d)
	}
	// Run as VS Code runs it: the variable expanded, the command from PATH.
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = strings.ReplaceAll(a, "${workspaceFolder}", root)
	}
	run := exec.Command(e.Command, args...)
	run.Env = append(env, "BERTH_HOME="+b.Home)
	for _, kv := range env { // the IDE's PATH lookup
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				if _, err := os.Stat(filepath.Join(dir, e.Command)); err == nil {
					run.Path, run.Err = filepath.Join(dir, e.Command), nil
					break
				}
			}
		}
	}
	run.Stderr = newLogWriter(t, "shim")
	ctx := testCtx(t, 60*time.Second)
	s := connectMCP(t, ctx, &mcp.CommandTransport{Command: run, TerminateDuration: 2 * time.Second})
	if info := getServerInfo(t, ctx, s); info.Project.Root != root || info.Server.PID != b.PID() {
		t.Fatalf("the portable entry reached %s on broker %d", info.Project.Root, info.Server.PID)
	}

	// A user's own file cannot be portable: refused, nothing written.
	claude := filepath.Join(userConfigDir(home), "Claude", "claude_desktop_config.json")
	out, code := runAs(t, env, "ide-config", "claude", "--project", root, "--portable", "--write")
	want := "berth ide-config: --portable writes a project's own file, and Claude Desktop's user file is yours alone: use --scope project with cursor, vscode, claude-code, gemini, codex, opencode\n"
	if code != 1 || out != want {
		t.Errorf("claude --portable: exit %d\n%q\nwant\n%q", code, out, want)
	}
	if _, err := os.Stat(claude); err == nil {
		t.Errorf("claude --portable wrote %s", claude)
	}
}

const cursorProjectServers = `{
  // team servers
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "GitHub Tools": {"command": "docker", "args": ["run", "-i", "ghcr.io/github/github-mcp-server"], "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}},
    "Docs Files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}/docs"]},
    "remote": {"type": "sse", "url": "http://127.0.0.1:9999/sse"},
    "api": {"url": "http://127.0.0.1:3001/mcp", "disabled": true},
  },
}
`

// TestIDEConfigImport: import moves the servers an app launches into the
// project's config (keeping its comments), leaves the app's project file
// (the repository's) with Berth's portable entry, no path of this
// machine, and the servers Berth cannot run, backs up both files, and
// says how to approve them; a second run changes nothing; a broken target
// changes nothing.
func TestIDEConfigImport(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	root := brokertest.Project(t, "team", map[string]string{
		".praxis-os/config.yaml": "# project settings\nmcp:\n  max_sessions: 4   # small team\n\nrag:\n  standards_path: docs\n",
		".cursor/mcp.json":       cursorProjectServers,
	})
	env := shimOnPath(t, userEnv(home))
	cfgFile := filepath.Join(root, ".praxis-os", "config.yaml")
	cursorFile := filepath.Join(root, ".cursor", "mcp.json")
	cfgBefore, _ := os.ReadFile(cfgFile)

	out, code := runAs(t, env, "ide-config", "import", "cursor", "--project", root)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"imported 3 server(s) from " + cursorFile + " into " + cfgFile + ":\n",
		"  memory      ", "npx -y @modelcontextprotocol/server-memory\n",
		"  docs-files  (was \"Docs Files\")  npx -y @modelcontextprotocol/server-filesystem ./docs\n",
		"  api         ", "http://127.0.0.1:3001/mcp\n",
		"left in Cursor's file:\n  GitHub Tools: it uses ${env:GITHUB_TOKEN}, which the app expands and Berth does not",
		"  remote: an SSE server: Berth connects to streamable HTTP servers (url) and runs commands; keep it in the app\n",
		"Cursor now launches Berth (server \"berth\": berth-shim --project ${workspaceFolder})\n",
		"next: servers a project declares run only once you approve them:\n  berth servers approve " + root + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	cfgAfter, _ := os.ReadFile(cfgFile)
	wantCfg := string(cfgBefore) + "\nservers:\n  # imported from Cursor (.cursor/mcp.json)\n  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n" +
		"  docs-files:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-filesystem', ./docs]\n  api:\n    url: http://127.0.0.1:3001/mcp\n    enabled: false\n"
	if d := cmp.Diff(wantCfg, string(cfgAfter)); d != "" {
		t.Errorf("project config (-want +got):\n%s", d)
	}
	cfg, err := config.Load(root)
	if err != nil || len(cfg.Servers) != 3 || cfg.Servers["api"].IsEnabled() || cfg.Servers["memory"].Command != "npx" || cfg.MCP.MaxSessions != 4 {
		t.Fatalf("the project config after import: %+v %v", cfg, err)
	}
	servers := readAsIDE(t, cursorFile, "mcpServers")
	var names []string
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"GitHub Tools", "berth", "remote"}) {
		t.Errorf("Cursor's servers after import: %v", names)
	}
	if raw, _ := os.ReadFile(cursorFile); !strings.Contains(string(raw), "// team servers") {
		t.Errorf("the comment of Cursor's file is gone:\n%s", raw)
	}
	for file, before := range map[string]string{cfgFile: string(cfgBefore), cursorFile: cursorProjectServers} {
		bk := backups(t, defaultHomeUnder(home), file)
		if len(bk) != 1 || strings.HasPrefix(bk[0], root) {
			t.Fatalf("backups of %s: %v (want one, out of the repository)", file, bk)
		}
		if raw, _ := os.ReadFile(bk[0]); string(raw) != before {
			t.Errorf("backup %s is not the file as it was", bk[0])
		}
	}

	// Again: nothing left to import, nothing written.
	snap := tree(t, root)
	out, code = runAs(t, env, "ide-config", "import", "cursor", "--project", root)
	if code != 0 || !strings.HasPrefix(out, "nothing to import from "+cursorFile) {
		t.Errorf("second import: exit %d\n%s", code, out)
	}
	if d := cmp.Diff(snap, tree(t, root)); d != "" {
		t.Errorf("the second import changed files (-before +after):\n%s", d)
	}

	// A target that does not load: refused, with its position; nothing changes.
	writeFile(t, cursorFile, cursorProjectServers)
	writeFile(t, cfgFile, "mcp: {max_sessions: 4\n")
	snap = tree(t, root)
	out, code = runAs(t, env, "ide-config", "import", "cursor", "--project", root)
	want := "berth ide-config: " + cfgFile + ":1:6: invalid YAML: the '{' opened here is never closed: close it with '}' (fix the YAML there) (fix it before importing; nothing was changed)\n"
	if code != 1 || out != want {
		t.Errorf("broken target: exit %d\n%q\nwant\n%q", code, out, want)
	}
	if d := cmp.Diff(snap, tree(t, root)); d != "" {
		t.Errorf("a refused import changed files (-before +after):\n%s", d)
	}
}

// TestIDEConfigImportIntoTheBrokerConfig: without --project the servers
// go to the user's broker config, in the XDG location, which the broker
// then reads.
func TestIDEConfigImportIntoTheBrokerConfig(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	env := userEnv(home)
	claude := filepath.Join(userConfigDir(home), "Claude", "claude_desktop_config.json")
	writeFile(t, claude, `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}, "globalShortcut": "Ctrl+Space"}`)
	root := brokertest.Project(t, "shop", nil)
	// The Berth entry of a global file names a project: the one around the working directory.
	cmd := exec.Command(brokertest.Berth(t), "ide-config", "import", "claude", "--scope", "user")
	cmd.Env, cmd.Dir = env, root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("import claude: %v\n%s", err, out)
	}
	userCfg := filepath.Join(userConfigDir(home), "berth", "config.yaml")
	if !strings.Contains(string(out), "into "+userCfg) || !strings.Contains(string(out), "next: restart the broker to load them") {
		t.Errorf("import output:\n%s", out)
	}
	raw, err := os.ReadFile(userCfg)
	if want := "servers:\n  # imported from Claude Desktop (" + displayHome(claude, home) + ")\n  memory:\n    command: npx\n    args: [-y, '@modelcontextprotocol/server-memory']\n"; err != nil || string(raw) != want {
		t.Errorf("broker config %s (%v):\n%s\nwant\n%s", userCfg, err, raw, want)
	}
	out2, code := runAs(t, env, "doctor")
	if !strings.Contains(out2, "ok    broker config "+userCfg) {
		t.Errorf("doctor (exit %d) does not read the imported config:\n%s", code, out2)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(mustRead(t, claude), &top); err != nil || string(top["globalShortcut"]) != `"Ctrl+Space"` {
		t.Errorf("Claude's other settings: %s (%v)", top, err)
	}
	var servers map[string]ideEntry
	if err := json.Unmarshal(top["mcpServers"], &servers); err != nil || len(servers) != 1 || servers["berth-shop"].Command != brokertest.Shim(t) {
		t.Errorf("Claude's servers after import: %+v (%v)", servers, err)
	}
}

// shimOnPath is env with the built berth-shim first on PATH, as an
// installed one is.
func shimOnPath(t *testing.T, env []string) []string {
	t.Helper()
	out := slices.Clone(env)
	for i, kv := range out {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			out[i] = "PATH=" + brokertest.Binaries(t) + string(os.PathListSeparator) + p
		}
	}
	return out
}

func displayHome(path, home string) string { return "~" + strings.TrimPrefix(path, home) }

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestIDEConfigBackupsDoNotPileUpInTheRepository: writes to a project's
// file keep their backups under Berth's home, the newest few only; the
// repository's folder holds only the file.
func TestIDEConfigBackupsDoNotPileUpInTheRepository(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	root := brokertest.Project(t, "tidy", nil)
	berthHome := brokertest.Home(t)
	env := userEnv(home, "BERTH_HOME="+berthHome)
	file := filepath.Join(root, ".vscode", "mcp.json")
	for i := range 8 { // each write changes the file: a new name each time
		if out, code := runAs(t, env, "ide-config", "vscode", "--project", root, "--name", fmt.Sprintf("b%d", i), "--write"); code != 0 {
			t.Fatalf("write %d: exit %d\n%s", i, code, out)
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
		t.Errorf("the repository's .vscode holds %d files, want only mcp.json: %v", len(ents), ents)
	}
	if bk := backups(t, berthHome, file); len(bk) != 5 {
		t.Errorf("%d backups kept, want the newest 5: %v", len(bk), bk)
	}
}
