package systest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// The TypeScript SDK client at debug level hears the project's log records
// as notifications/message, and tools/list_changed with the new list after
// an edit of enabled_tool_groups; a config that does not load is a warning
// record and changes nothing. Over streamable HTTP and through the shim.
func TestTypeScriptSDKHearsLogsAndToolChanges(t *testing.T) {
	t.Parallel()
	node := needTSClient(t)
	b := brokertest.StartBroker(t, brokertest.Options{})
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			root := brokertest.Project(t, "notify-"+transport, map[string]string{
				".praxis-os/config.yaml":        "mcp:\n  enabled_tool_groups: [rag, workflow]\n",
				".praxis-os/standards/rules.md": "# Rules\n\nKeep them.\n",
			})
			if transport == "http" {
				if out, code := berthCmd(t, b.Home, "attach", root); code != 0 {
					t.Fatalf("berth attach: %d %s", code, out)
				}
			}
			ctx := testCtx(t, 90*time.Second)
			cmd := exec.CommandContext(ctx, node, "notify.mjs", root, transport)
			cmd.Dir = tsClientDir
			cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home, "BERTH_LISTEN=",
				"PATH="+brokertest.Binaries(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
			cmd.Stderr = newLogWriter(t, "notify.mjs")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { brokertest.KillPID(cmd.Process.Pid); _ = cmd.Wait() })
			lines := bufio.NewScanner(stdout)
			lines.Buffer(nil, 4<<20)
			next := func(what string) string {
				if !lines.Scan() {
					t.Fatalf("notify.mjs ended before %s: %v", what, lines.Err())
				}
				return lines.Text()
			}
			config := filepath.Join(root, ".praxis-os", "config.yaml")

			if l := next("ready"); l != "ready" {
				t.Fatalf("notify.mjs said %q, want ready", l)
			}
			if err := os.WriteFile(config, []byte("mcp:\n  enabled_tool_groups: [rag]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			changed, ok := strings.CutPrefix(next("tools/list_changed"), "changed ")
			if !ok {
				t.Fatalf("notify.mjs said %q, want changed", changed)
			}
			if err := os.WriteFile(config, []byte("mcp:\n  enabled_tool_groups: [rag\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Before, After, Still []string
				Changes              int
				Logs                 []logRecord
			}
			if err := json.Unmarshal([]byte(next("the report")), &got); err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(got.Before, "start_workflow") || slices.Contains(got.After, "start_workflow") || !slices.Contains(got.After, "search_standards") {
				t.Errorf("tools before %v, after the edit %v", got.Before, got.After)
			}
			if !slices.Equal(got.After, got.Still) {
				t.Errorf("a config that does not load changed the tools: %v -> %v", got.After, got.Still)
			}
			applied := false
			for _, l := range got.Logs {
				if l.Level == "info" && strings.Contains(l.Data["message"].(string), "project config applied") {
					applied = true
				}
			}
			if !applied {
				t.Errorf("no info record of the applied edit among %d records: %+v", len(got.Logs), got.Logs)
			}
			if !slices.ContainsFunc(got.Logs, func(l logRecord) bool { return l.refusal() }) {
				t.Errorf("no warning that the edit was not applied among %+v", got.Logs)
			}
			// doctor says the old settings are served, not that the project is refused.
			out, _ := berthCmd(t, b.Home, "doctor")
			mustContain(t, out, "config edit not applied, the previous settings are still served", "config.yaml")
			if strings.Contains(out, "refuses the project") {
				t.Errorf("doctor calls a served project refused:\n%s", out)
			}
			lateLine, ok := strings.CutPrefix(next("the late session's report"), "late ")
			if !ok {
				t.Fatalf("notify.mjs said %q, want late", lateLine)
			}
			var late struct {
				Heard   []logRecord
				Missing []string
			}
			if err := json.Unmarshal([]byte(lateLine), &late); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(late.Heard, func(l logRecord) bool { return l.refusal() }) {
				t.Errorf("the session that set its level after the bad edit heard %+v", late.Heard)
			}
			if !slices.ContainsFunc(late.Missing, func(m string) bool { return strings.Contains(m, "project config edit not applied") }) {
				t.Errorf("get_server_info's missing after a bad edit: %q", late.Missing)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("notify.mjs: %v", err)
			}
		})
	}
}

// logRecord is a notifications/message as notify.mjs reports it.
type logRecord struct {
	Level  string         `json:"level"`
	Logger string         `json:"logger"`
	Data   map[string]any `json:"data"`
}

// refusal reports whether l is the warning that a config edit was not
// applied.
func (l logRecord) refusal() bool {
	m, _ := l.Data["message"].(string)
	return l.Level == "warning" && strings.Contains(m, "project config edit not applied")
}
