package ideconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"
)

var testEntry = Entry{Command: "/opt/bin/berth-shim", Args: []string{"--project", "/src/shop"}, Env: map[string]string{"BERTH_HOME": "/h"}}

// A VS Code file as people write them: comments, trailing commas, tabs.
const vscodeFile = `// Project MCP servers
{
	"inputs": [
		{"type": "promptString", "id": "token", "password": true}, // asked once
	],
	"servers": {
		/* the GitHub server */
		"github": {
			"type": "stdio",
			"command": "docker",
			"args": ["run", "-i", "ghcr.io/github/github-mcp-server",], // trailing comma
		},
	},
}
`

func TestMergeKeepsCommentsAndFormatting(t *testing.T) {
	out, err := Merge([]byte(vscodeFile), "servers", "berth", Entry{Type: "stdio", Command: "/opt/bin/berth-shim", Args: []string{"--project", "/src/shop"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `// Project MCP servers
{
	"inputs": [
		{"type": "promptString", "id": "token", "password": true}, // asked once
	],
	"servers": {
		/* the GitHub server */
		"github": {
			"type": "stdio",
			"command": "docker",
			"args": ["run", "-i", "ghcr.io/github/github-mcp-server",], // trailing comma
		},
		"berth": {
			"type": "stdio",
			"command": "/opt/bin/berth-shim",
			"args": [
				"--project",
				"/src/shop"
			]
		},
	},
}
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Fatalf("merged (-want +got):\n%s", diff)
	}
	again, err := Merge(out, "servers", "berth", Entry{Type: "stdio", Command: "/opt/bin/berth-shim", Args: []string{"--project", "/src/shop"}})
	if err != nil || string(again) != string(out) {
		t.Fatalf("second merge changed the file (%v):\n%s", err, again)
	}
	// Replacing the entry keeps its place and the comments around it.
	changed, err := Merge(out, "servers", "berth", Entry{Type: "stdio", Command: "berth-shim", Args: []string{"--project", WorkspaceFolder}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(changed), "\"command\": \"berth-shim\",\n\t\t\t\"args\": [\n\t\t\t\t\"--project\",\n\t\t\t\t\"${workspaceFolder}\"\n\t\t\t]\n\t\t},\n\t},\n}\n") ||
		!strings.Contains(string(changed), "/* the GitHub server */") || strings.Count(string(changed), `"berth"`) != 1 {
		t.Fatalf("replaced entry:\n%s", changed)
	}
}

func TestMergeCursorFileWithoutTrailingCommas(t *testing.T) {
	in := "{\n  // my servers\n  \"mcpServers\": {\n    \"memory\": { \"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"] }\n  }\n}\n"
	out, err := Merge([]byte(in), "mcpServers", "berth", testEntry)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  // my servers\n  \"mcpServers\": {\n    \"memory\": { \"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"] },\n" +
		"    \"berth\": {\n      \"command\": \"/opt/bin/berth-shim\",\n      \"args\": [\n        \"--project\",\n        \"/src/shop\"\n      ],\n      \"env\": {\n        \"BERTH_HOME\": \"/h\"\n      }\n    }\n  }\n}\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Fatalf("merged (-want +got):\n%s", diff)
	}
}

func TestMergeKeepsACommentOnTheLastLine(t *testing.T) {
	for _, comma := range []string{"", ","} {
		in := "{\n  \"mcpServers\": {\n    \"a\": {}" + comma + " // notes\n  }\n}\n"
		out, err := Merge([]byte(in), "mcpServers", "b", Entry{Command: "c", Args: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		want := "{\n  \"mcpServers\": {\n    \"a\": {}, // notes\n    \"b\": {\n      \"command\": \"c\",\n      \"args\": []\n    }" + comma + "\n  }\n}\n"
		if string(out) != want {
			t.Errorf("comma %q:\n%s\nwant\n%s", comma, out, want)
		}
	}
}

func TestMergeNewAndEmptyFiles(t *testing.T) {
	want := "{\n  \"servers\": {\n    \"berth\": {\n      \"type\": \"stdio\",\n      \"command\": \"c\",\n      \"args\": []\n    }\n  }\n}\n"
	for _, in := range []string{"", "  \n", "{}\n"} {
		out, err := Merge([]byte(in), "servers", "berth", Entry{Type: "stdio", Command: "c", Args: []string{}})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if string(out) != want {
			t.Errorf("%q merged to\n%s", in, out)
		}
	}
	// A one-line file stays on one line.
	out, err := Merge([]byte(`{"mcpServers": {"a": {"command": "x"}}}`), "mcpServers", "berth", Entry{Command: "c", Args: []string{"--project", "/p"}})
	if err != nil || string(out) != `{"mcpServers": {"a": {"command": "x"}, "berth": {"command": "c", "args": ["--project", "/p"]}}}` {
		t.Fatalf("one-line file: %v\n%s", err, out)
	}
}

func TestMergeRefusesWhatItCannotMerge(t *testing.T) {
	for in, mention := range map[string]string{
		`{"mcpServers": {"a": 1,,}}`: "invalid JSON at line 1, column 24",
		"{\n  \"mcpServers\": {\n":   "invalid JSON at line 3, column 1",
		`[1, 2]`:                     "the file is an array, not an object",
		`{"mcpServers": "none"}`:     `"mcpServers" is a string, not an object`,
		`{"a": 1} {"b": 2}`:          "after top-level value",
	} {
		if _, err := Merge([]byte(in), "mcpServers", "berth", testEntry); err == nil || !strings.Contains(err.Error(), mention) {
			t.Errorf("Merge(%q) = %v, want an error mentioning %q", in, err, mention)
		}
	}
}

func TestMergeDuplicateServersLastWins(t *testing.T) {
	in := `{"mcpServers": {"berth": {"command": "a"}, "x": {}, "berth": {"command": "b"}}}`
	out, err := Merge([]byte(in), "mcpServers", "berth", testEntry)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(out), `"berth"`) != 1 || !strings.Contains(string(out), testEntry.Command) {
		t.Fatalf("duplicates merged into\n%s", out)
	}
}

// FuzzMerge checks Merge against hujson's standard form read by
// encoding/json: a file either is refused, or comes back as JSONC that
// reads as the same document with the entry set, every other top-level
// key and server equal, and merging again is a no-op.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers": {"a": {"command": "x"}}, "k": [1, {"z": null}]}`,
		`{"mcpServers": {"a": 1,}}`, `[1]`, `{"mcpServers": "s"}`, `{"a":"\u00e9<&>"}`, `{"a": 1} x`, `{"mcpServers":{},"mcpServers":{"b":2}}`,
		vscodeFile, "{\n\t// c\n\t\"mcpServers\": { /* none */ }\n}", "{\"mcpServers\": {\"berth\": 1, \"berth\": 2,}}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Merge(in, "mcpServers", "berth", testEntry)
		if err != nil {
			return
		}
		before := standard(t, in)
		after := standard(t, out)
		if after == nil {
			t.Fatalf("Merge wrote what does not parse: %q", out)
		}
		for k, v := range before {
			if k != "mcpServers" && !jsonEqual(t, v, after[k]) {
				t.Fatalf("key %q changed from %s to %s", k, v, after[k])
			}
		}
		var sb, sa map[string]json.RawMessage
		if v, ok := before["mcpServers"]; ok {
			if err := json.Unmarshal(v, &sb); err != nil {
				t.Fatalf("accepted servers that are not an object: %s", v)
			}
		}
		if err := json.Unmarshal(after["mcpServers"], &sa); err != nil {
			t.Fatal(err)
		}
		for k, v := range sb {
			if k != "berth" && !jsonEqual(t, v, sa[k]) {
				t.Fatalf("server %q changed from %s to %s", k, v, sa[k])
			}
		}
		var e Entry
		if err := json.Unmarshal(sa["berth"], &e); err != nil || !cmp.Equal(e, testEntry) {
			t.Fatalf("entry %s (%v)", sa["berth"], err)
		}
		if again, err := Merge(out, "mcpServers", "berth", testEntry); err != nil || string(again) != string(out) {
			t.Fatalf("second merge differs (%v):\n%s\n%s", err, out, again)
		}
	})
}

// standard reads JSONC as a top-level object of standard JSON values
// (nil when it does not parse; an empty map for blank input).
func standard(t *testing.T, data []byte) map[string]json.RawMessage {
	t.Helper()
	if strings.TrimSpace(string(data)) == "" {
		return map[string]json.RawMessage{}
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(std, &m); err != nil {
		t.Fatalf("standardized JSONC does not read as an object (%v): %s", err, std)
	}
	return m
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}
