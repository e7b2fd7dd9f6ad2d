package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadNamesTheMistake: every mistake in a project's config is an
// *Error with the file, line and column, the key and the fix.
func TestLoadNamesTheMistake(t *testing.T) {
	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"unknown key", "config.yaml", "mcp:\n  http_prot: 4300\n",
			`config.yaml:2:3: unknown key "mcp.http_prot": did you mean "mcp.http_port"?`},
		{"key at the wrong level", "config.yaml", "http_port: 4300\n",
			`config.yaml:1:1: unknown key "http_port": did you mean "mcp.http_port"? (it belongs under mcp)`},
		{"nothing close", "config.yaml", "rag:\n  colour: blue\n",
			`config.yaml:2:3: unknown key "rag.colour" (the keys under rag are allow_outside, standards_path, usage_path, workflows_path)`},
		{"number expected", "config.yaml", "mcp:\n  max_sessions: many\n",
			`config.yaml:2:17: mcp.max_sessions: "many" is not a whole number: use a whole number such as 10`},
		{"list expected", "config.yaml", "mcp:\n  enabled_tool_groups: rag\n",
			`config.yaml:2:24: mcp.enabled_tool_groups: "rag" is not a list: use a list such as [rag, workflow]`},
		{"section expected", "config.yaml", "mcp: 4300\n",
			`config.yaml:1:6: mcp is "4300", not a section: use indented keys below it, such as {http_port: 4300}`},
		{"duration in a server", "config.yaml", "servers:\n  m:\n    command: x\n    call_timeout: 5 minutes\n",
			`config.yaml:4:19: servers.m.call_timeout: "5 minutes" is not a duration: use a Go duration such as 30s (units ns, us, ms, s, m, h)`},
		{"server field", "config.yaml", "servers:\n  m: {comand: x}\n",
			`config.yaml:2:7: unknown key "servers.m.comand": did you mean "servers.m.command"?`},
		{"bool", "config.yaml", "servers:\n  m: {command: x, enabled: maybe}\n",
			`config.yaml:2:28: servers.m.enabled: "maybe" is not true or false: use true or false`},
		{"unclosed brace on line 2", "config.yaml", "rag:\n  standards_path: docs\nmcp: {http_port: 4300\nservers: {}\n",
			`config.yaml:4:1: invalid YAML: the '{' opened at 3:6 is not closed before this line: close it with '}' (fix the YAML there)`},
		{"tab indent", "config.yaml", "mcp:\n\thttp_port: 1\n",
			"config.yaml:2:1: invalid YAML: a tab in the indentation: indent with spaces (fix the YAML there)"},
		{"quote never closed", "config.yaml", "rag:\n  standards_path: 'docs\nmcp: {}\n",
			`config.yaml:2:19: invalid YAML: the quote opened here is never closed: close it with ' (fix the YAML there)`},
		{"bracket closed twice", "config.yaml", "mcp: {http_port: 1}}\n",
			`config.yaml:1:20: invalid YAML: a '}' with no '{' before it: remove it (fix the YAML there)`},
		{"bracket of the other kind", "config.yaml", "mcp:\n  enabled_tool_groups: [rag, pos}\n",
			`config.yaml:2:33: invalid YAML: '}' closes the '[' opened at 2:24: close it with ']' (fix the YAML there)`},
		{"indentation of no section", "config.yaml", "servers:\n    m:\n      command: x\n  n:\n      command: y\n",
			`config.yaml:4:3: invalid YAML: this line's indentation (2 spaces) matches no line above it: line it up with the other keys of its section (fix the YAML there)`},
		{"yaml.v3's words", "config.yaml", "mcp: a: b\n",
			`config.yaml: invalid YAML: mapping values are not allowed in this context (fix the YAML there)`},
		{"json syntax", "config.json", "{\n  \"mcp\": {\"http_port\": 4300,}\n}\n",
			`config.json:2:29: invalid JSON: invalid character '}' looking for beginning of object key string (fix the JSON there; praxis-os reads this file too, so no comments or trailing commas)`},
		{"json unknown key", "config.json", "{\n  \"rag\": {\"standard_path\": \"x\"}\n}\n",
			`config.json:2:11: unknown key "rag.standard_path": did you mean "rag.standards_path"?`},
		{"range, placed", "config.yaml", "mcp:\n  http_port: 70000\n",
			`config.yaml:2:14: mcp.http_port 70000 is not a port (use 1-65535)`},
		{"not a mapping", "config.yaml", "- a\n- b\n",
			`config.yaml:1:1: the file must hold keys (such as finder), not a list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, tc.file, tc.body)
			_, err := Load(root)
			want := filepath.Join(root, Dir) + string(filepath.Separator) + tc.want
			if err == nil || err.Error() != want {
				t.Fatalf("Load:\n got %v\nwant %s", err, want)
			}
			if !IsError(err) {
				t.Errorf("%T is not a *config.Error", err)
			}
		})
	}
}

// TestPraxisGroupsAreWarnings: praxis-os's default groups load; browser,
// which Berth does not serve, and an unknown name are warnings.
func TestPraxisGroupsAreWarnings(t *testing.T) {
	root := t.TempDir()
	write(t, root, "config.json", `{"mcp": {"enabled_tool_groups": ["rag", "workflow", "browser", "wrkflow"]}}`)
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.MCP.EnabledToolGroups, []string{GroupRAG, GroupWorkflow}) {
		t.Errorf("groups %v, want the served ones", c.MCP.EnabledToolGroups)
	}
	file := filepath.Join(root, Dir, "config.json")
	want := []string{
		file + `:1:33: mcp.enabled_tool_groups: "browser" is praxis-os's browser tools (Playwright), which Berth does not serve: its tools are not offered (Berth serves rag, workflow, pos)`,
		file + `:1:33: mcp.enabled_tool_groups: unknown group "wrkflow" is ignored (did you mean "workflow"? Berth serves rag, workflow, pos)`,
	}
	if !slices.Equal(c.Warnings, want) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(c.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

func TestEmptyValuesKeepDefaults(t *testing.T) {
	root := t.TempDir()
	write(t, root, "config.yaml", "# only comments\nmcp:\nrag:\n  standards_path:\n")
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if d := Default(); c.MCP.HTTPPort != d.MCP.HTTPPort || c.RAG.StandardsPath != d.RAG.StandardsPath || !slices.Equal(c.MCP.EnabledToolGroups, d.MCP.EnabledToolGroups) {
		t.Fatalf("empty keys changed the defaults: %+v", c)
	}
	write(t, root, "config.yaml", "")
	os.Remove(filepath.Join(root, Dir, "config.yaml"))
}

func TestClosest(t *testing.T) {
	cands := []string{"ports.start", "ports.end", "mount_grace", "listen", "log_level"}
	for in, want := range map[string]string{
		"mount-grace": "mount_grace", "MOUNT_GRACE": "mount_grace", "port.start": "ports.start", "listn": "listen",
		"loglevel": "log_level", "color": "", "x": "",
	} {
		if got := Closest(in, cands); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}
