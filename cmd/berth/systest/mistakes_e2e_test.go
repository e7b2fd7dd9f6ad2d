package systest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tree is every file under dir with a digest of its content and its mode,
// to show that a refused command changed nothing on disk.
func tree(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			sum := ""
			if d.Type().IsRegular() {
				raw, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				h := sha256.Sum256(raw)
				sum = hex.EncodeToString(h[:8])
			}
			out[p] = fi.Mode().String() + " " + sum
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return out
}

// runWith runs a built binary with env and returns its stderr (and
// stdout), and its exit code.
func runWith(t *testing.T, env []string, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestBrokerConfigMistakes: each mistake in the broker's file, variables
// and flags stops `berth serve` with one line naming where and the fix,
// exit 1 (2 for a flag), and leaves the home as it was.
func TestBrokerConfigMistakes(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	file := filepath.Join(home, api.ConfigName)
	for _, tc := range []struct {
		name, config string
		env, args    []string
		code         int
		want         string
	}{
		{name: "duration", config: "listen: ''\nmount_grace: 5 minutes\n", code: 1,
			want: "berth serve: " + file + `:2:14: mount_grace: "5 minutes" is not a duration: use a Go duration such as 30s (units ns, us, ms, s, m, h)`},
		{name: "misspelt key", config: "port:\n  start: 6000\n", code: 1,
			want: "berth serve: " + file + `:1:1: unknown key "port": did you mean "ports"?`},
		{name: "unclosed brace on line 2", config: "listen: ''\nports: {start: 6000\nauth: none\n", code: 1,
			want: "berth serve: " + file + ":3:1: invalid YAML: the '{' opened at 2:8 is not closed before this line: close it with '}' (fix the YAML there)"},
		{name: "variable", env: []string{"BERTH_MOUNT_GRACE=5 minutes"}, code: 1,
			want: `berth serve: BERTH_MOUNT_GRACE: "5 minutes" is not a duration: use a Go duration such as 30s (units ns, us, ms, s, m, h)`},
		{name: "misspelt variable", env: []string{"BERTH_PORT_START=6000"}, code: 1,
			want: "berth serve: BERTH_PORT_START is not a Berth setting: did you mean BERTH_PORTS_START? (rename the variable; docs/configuration.md lists them)"},
		{name: "flag value", args: []string{"--mount-grace", "5 minutes"}, code: 2,
			want: "berth serve: --mount-grace: \"5 minutes\" is not a duration: use a Go duration such as 30s (units ns, us, ms, s, m, h)\nusage: berth serve [flags]"},
		{name: "misspelt flag", args: []string{"--port-start", "6000"}, code: 2,
			want: "berth serve: unknown flag --port-start (did you mean --ports-start?)\nusage: berth serve [flags]"},
		{name: "range", config: "ports: {start: 6000, end: 5000}\n", code: 1,
			want: "berth serve: ports.start (6000) is above ports.end (5000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(file)
			if tc.config != "" {
				if err := os.WriteFile(file, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, home)
			env := append(append(os.Environ(), "BERTH_HOME="+home), tc.env...)
			out, code := runWith(t, env, brokertest.Berth(t), append([]string{"serve"}, tc.args...)...)
			if code != tc.code || strings.TrimSpace(out) != tc.want {
				t.Fatalf("exit %d, output:\n%s\nwant exit %d:\n%s", code, out, tc.code, tc.want)
			}
			if d := cmp.Diff(before, tree(t, home)); d != "" {
				t.Errorf("the home changed (-before +after):\n%s", d)
			}
		})
	}
}

// TestShimSaysWhyTheBrokerCannotStart: a shim that starts a broker whose
// config is wrong prints the broker's own message (through the readiness
// report), not a pointer to a log the broker never opened.
func TestShimSaysWhyTheBrokerCannotStart(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	file := filepath.Join(home, api.ConfigName)
	if err := os.WriteFile(file, []byte("listen: ''\nidle_timeout: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := brokertest.Project(t, "p", nil)
	before := tree(t, root)
	out, code := runWith(t, append(os.Environ(), "BERTH_HOME="+home), brokertest.Shim(t), "--project", root)
	want := "berth-shim: the broker cannot start: " + file + `:2:15: idle_timeout: "soon" is not a duration: use a Go duration such as 10m (units ns, us, ms, s, m, h)`
	if code == 0 || !strings.Contains(out, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant it to hold:\n%s", code, out, want)
	}
	if d := cmp.Diff(before, tree(t, root)); d != "" {
		t.Errorf("the project changed (-before +after):\n%s", d)
	}
}

// TestProjectConfigMistakes: a project whose config is wrong is refused
// with the file, line, column and fix, in the attach answer (code
// bad_config), the shim's stderr, `berth attach` and `berth doctor`; the
// broker and its other projects carry on; nothing is written in the project.
func TestProjectConfigMistakes(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	good := brokertest.Project(t, "good", nil)
	b.Attach(t, good)
	for _, tc := range []struct{ name, file, body, want string }{
		{"misspelt key", "config.yaml", "mcp:\n  http_prot: 4300\n", `config.yaml:2:3: unknown key "mcp.http_prot": did you mean "mcp.http_port"?`},
		{"wrong form", "config.yaml", "mcp:\n  max_sessions: ten\n", `config.yaml:2:17: mcp.max_sessions: "ten" is not a whole number: use a whole number such as 10`},
		{"unclosed brace", "config.yaml", "rag:\n  standards_path: docs\nmcp: {http_port: 4300\n", `config.yaml:3:6: invalid YAML: the '{' opened here is never closed: close it with '}' (fix the YAML there)`},
		{"praxis json", "config.json", "{\"rag\": {\"standards_path\": \"docs\",}}", `config.json:1:35: invalid JSON: invalid character '}' looking for beginning of object key string (fix the JSON there; praxis-os reads this file too, so no comments or trailing commas)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := brokertest.Project(t, "bad", map[string]string{".praxis-os/" + tc.file: tc.body})
			msg := filepath.Join(root, ".praxis-os", tc.want) + " (the project is not served until this is fixed)"
			before := tree(t, root)
			ctx := testCtx(t, 30*time.Second)
			_, err := b.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
			var ae *api.Error
			if !errors.As(err, &ae) || ae.Code != api.CodeBadConfig || ae.Message != msg {
				t.Fatalf("attach answer: %#v\nwant code %s and %s", err, api.CodeBadConfig, msg)
			}
			out, code := berthCmd(t, b.Home, "attach", root)
			if want := "berth attach: attach " + root + ": " + msg + "\n"; code != 1 || out != want {
				t.Errorf("berth attach: exit %d\n%s\nwant exit 1\n%s", code, out, want)
			}
			out, code = runWith(t, append(os.Environ(), "BERTH_HOME="+b.Home), brokertest.Shim(t), "--project", root)
			if code == 0 || !strings.Contains(out, msg) {
				t.Errorf("berth-shim: exit %d\n%s\nwant it to say\n%s", code, out, msg)
			}
			out, code = doctorLines(t, b.Home)
			if code != 1 || !strings.Contains(out, "FAIL  project "+root+" was refused") || !strings.Contains(out, msg+" -- fix: fix the file at the line it names") {
				t.Errorf("doctor: exit %d\n%s", code, out)
			}
			if d := cmp.Diff(before, tree(t, root)); d != "" {
				t.Errorf("the project changed (-before +after):\n%s", d)
			}
			// Fixed, it mounts, and doctor no longer names it.
			if err := os.Remove(filepath.Join(root, ".praxis-os", tc.file)); err != nil {
				t.Fatal(err)
			}
			b.Attach(t, root)
			if out, _ := doctorLines(t, b.Home); strings.Contains(out, root+" was refused") {
				t.Errorf("doctor still names the fixed project:\n%s", out)
			}
		})
	}
	if _, err := b.Client.Project(testCtx(t, 10*time.Second), api.ProjectID(good)); err != nil {
		t.Fatalf("the good project is gone: %v", err)
	}
}

// TestPraxisConfigWithBrowserIsServedWithAWarning: praxis-os's default
// config.json, with the browser group Berth does not serve and a misspelt
// group, mounts; the warnings are in get_server_info, the broker's log and
// doctor (which exits 0: nothing needs the user).
func TestPraxisConfigWithBrowserIsServedWithAWarning(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "praxis", map[string]string{
		".praxis-os/config.json":    `{"rag": {"standards_path": ".praxis-os/standards", "index_path": ".praxis-os/.cache/vector_index", "embedding_provider": "local"}, "mcp": {"enabled_tool_groups": ["rag", "workflow", "browser", "wokflow"], "max_tools_warning": 20}}`,
		".praxis-os/standards/a.md": "# A\n\nalpha\n",
	})
	file := filepath.Join(root, ".praxis-os", "config.json")
	warnings := []string{
		file + `:1:163: mcp.enabled_tool_groups: "browser" is praxis-os's browser tools (Playwright), which Berth does not serve: its tools are not offered (Berth serves rag, workflow, pos)`,
		file + `:1:163: mcp.enabled_tool_groups: unknown group "wokflow" is ignored (did you mean "workflow"? Berth serves rag, workflow, pos)`,
	}
	ctx := testCtx(t, time.Minute)
	tr, _ := shimTransport(t, b.Home, root)
	s := connectMCP(t, ctx, tr)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_server_info: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var info struct {
		Warnings     []string `json:"warnings"`
		Capabilities struct {
			Tools      []string `json:"tools"`
			ToolGroups []string `json:"tool_groups"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(warnings, info.Warnings); d != "" {
		t.Errorf("get_server_info warnings (-want +got):\n%s", d)
	}
	if !slices.Equal(info.Capabilities.ToolGroups, []string{"rag", "workflow"}) || !slices.Contains(info.Capabilities.Tools, "search_standards") || !slices.Contains(info.Capabilities.Tools, "start_workflow") {
		t.Errorf("served groups %v, tools %v", info.Capabilities.ToolGroups, info.Capabilities.Tools)
	}
	brokertest.Eventually(t, "the warnings in the broker's log", func() bool {
		log := b.Stderr() // slog's text format quotes the message
		return strings.Contains(log, `msg="project config: `+strings.ReplaceAll(warnings[0], `"`, `\"`)+`"`) && strings.Contains(log, `unknown group \"wokflow\" is ignored`)
	})
	out, code := doctorLines(t, b.Home)
	if code != 0 || !strings.Contains(out, "warn  project praxis: "+warnings[0]+" -- the rest of the project is served") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
}
