package ideconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testEntry = Entry{Command: "/opt/bin/berth-shim", Args: []string{"--project", "/src/shop"}, Env: map[string]string{"BERTH_HOME": "/h"}}

func TestMergeKeepsOtherServersKeysAndOrder(t *testing.T) {
	in := `{
  "zeta": {"theme": "dark"},
  "mcpServers": {
    "github": {"command": "docker", "args": ["run", "-i"], "env": {"TOKEN": "x"}},
    "berth": {"command": "old"},
    "aaa": {"url": "http://127.0.0.1:9/mcp"}
  },
  "alpha": [1, 2.50, true, null]
}`
	out, err := Merge([]byte(in), "mcpServers", "berth", testEntry)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "zeta": {
    "theme": "dark"
  },
  "mcpServers": {
    "github": {
      "command": "docker",
      "args": [
        "run",
        "-i"
      ],
      "env": {
        "TOKEN": "x"
      }
    },
    "berth": {
      "command": "/opt/bin/berth-shim",
      "args": [
        "--project",
        "/src/shop"
      ],
      "env": {
        "BERTH_HOME": "/h"
      }
    },
    "aaa": {
      "url": "http://127.0.0.1:9/mcp"
    }
  },
  "alpha": [
    1,
    2.50,
    true,
    null
  ]
}
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Fatalf("merged file (-want +got):\n%s", diff)
	}
	again, err := Merge(out, "mcpServers", "berth", testEntry)
	if err != nil || string(again) != string(out) {
		t.Fatalf("second merge changed the file (%v):\n%s", err, again)
	}
}

func TestMergeNewAndEmptyFiles(t *testing.T) {
	for _, in := range []string{"", "  \n", "{}"} {
		out, err := Merge([]byte(in), "servers", "berth", Entry{Type: "stdio", Command: "c", Args: []string{}})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		want := "{\n  \"servers\": {\n    \"berth\": {\n      \"type\": \"stdio\",\n      \"command\": \"c\",\n      \"args\": []\n    }\n  }\n}\n"
		if string(out) != want {
			t.Errorf("%q merged to\n%s", in, out)
		}
	}
}

func TestMergeRefusesWhatItCannotMerge(t *testing.T) {
	for in, mention := range map[string]string{
		`{"mcpServers": {"a": 1,}}`:   "invalid character '}'",
		`{"mcpServers": {`:            "unexpected end",
		`[1, 2]`:                      "the file is an array, not an object",
		`{"mcpServers": "none"}`:      `"mcpServers" is a string, not an object`,
		`{"a": 1} {"b": 2}`:           "more data after",
		`{"a": 1} // a comment`:       "invalid character '/'",
		"{\"a\": 1,\n  // comment\n}": "invalid character '/'",
	} {
		if _, err := Merge([]byte(in), "mcpServers", "berth", testEntry); err == nil || !strings.Contains(err.Error(), mention) {
			t.Errorf("Merge(%q) = %v, want an error mentioning %q", in, err, mention)
		}
	}
}

func TestMergeDuplicateServersKeyLastWins(t *testing.T) {
	in := `{"mcpServers": {"a": {}}, "x": 1, "mcpServers": {"b": {}}}`
	out, err := Merge([]byte(in), "mcpServers", "berth", testEntry)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ MCPServers map[string]json.RawMessage }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.MCPServers["b"]; !ok || strings.Count(string(out), `"mcpServers"`) != 1 {
		t.Fatalf("duplicate key merged into\n%s", out)
	}
}

// FuzzMerge checks Merge against encoding/json: a file either is refused, or
// comes back as valid JSON with the entry set, every other top-level key and
// server equal to what the app would have read before, and merging again is
// a no-op.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers": {"a": {"command": "x"}}, "k": [1, {"z": null}]}`,
		`{"mcpServers": {"a": 1,}}`, `[1]`, `{"mcpServers": "s"}`, `{"a":"\u00e9<&>"}`, `{"a": 1} x`, `{"mcpServers":{},"mcpServers":{"b":2}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Merge(in, "mcpServers", "berth", testEntry)
		if err != nil {
			return
		}
		var before, after map[string]json.RawMessage
		if len(strings.TrimSpace(string(in))) > 0 {
			if err := json.Unmarshal(in, &before); err != nil {
				t.Fatalf("Merge accepted what encoding/json refuses (%v): %q", err, in)
			}
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("Merge wrote invalid JSON (%v): %q", err, out)
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

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}
