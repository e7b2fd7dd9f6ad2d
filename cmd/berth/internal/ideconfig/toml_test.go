package ideconfig

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

var codexEntry = object{{"command", "/opt/bin/berth-shim"}, {"args", []string{"--project", "/src/shop"}}, {"env", map[string]string{"BERTH_HOME": "/h"}}}

func TestTOMLSetKeepsEveryOtherByte(t *testing.T) {
	in := appFiles["codex"].body
	d := mustTOML(t, in)
	if err := d.set([]string{"mcp_servers"}, "berth", codexEntry); err != nil {
		t.Fatal(err)
	}
	want := `# Codex settings
model = "o3"

[mcp_servers.memory]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-memory"]
startup_timeout_sec = 20 # slow to start

[mcp_servers.memory.env]
MEMORY_FILE = "/tmp/m.json"

[mcp_servers.berth]
command = "/opt/bin/berth-shim"
args = ["--project", "/src/shop"]
env = { BERTH_HOME = "/h" }

# faster profile
[profiles.fast]
model = "o4-mini"
`
	if diff := cmp.Diff(want, string(d.bytes())); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// Replacing it: in place, its sub-tables gone, the rest as it was.
	withSub := strings.Replace(want, "env = { BERTH_HOME = \"/h\" }\n", "startup_timeout_sec = 5\n\n[mcp_servers.berth.env]\nX = \"1\"\n", 1)
	d = mustTOML(t, withSub)
	if err := d.set([]string{"mcp_servers"}, "berth", codexEntry); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(d.bytes())); diff != "" {
		t.Fatalf("replaced (-want +got):\n%s", diff)
	}
	// Removing memory takes its tables and the comment lines above them.
	if err := d.remove([]string{"mcp_servers"}, "memory"); err != nil {
		t.Fatal(err)
	}
	want = "# Codex settings\nmodel = \"o3\"\n\n[mcp_servers.berth]\ncommand = \"/opt/bin/berth-shim\"\nargs = [\"--project\", \"/src/shop\"]\nenv = { BERTH_HOME = \"/h\" }\n\n# faster profile\n[profiles.fast]\nmodel = \"o4-mini\"\n"
	if diff := cmp.Diff(want, string(d.bytes())); diff != "" {
		t.Fatalf("removed (-want +got):\n%s", diff)
	}
}

func TestTOMLNewAndEmptyFiles(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "[mcp_servers.berth]\n",
		"model = \"o3\"":      "model = \"o3\"\n\n[mcp_servers.berth]\n",
		"model = \"o3\"\n\n":  "model = \"o3\"\n\n\n[mcp_servers.berth]\n",
		"[mcp_servers]\n":     "[mcp_servers]\n\n[mcp_servers.berth]\n",
		"# only a comment\n":  "# only a comment\n\n[mcp_servers.berth]\n",
		"[tui]\nnotify = 1\n": "[tui]\nnotify = 1\n\n[mcp_servers.berth]\n",
	} {
		d := mustTOML(t, in)
		if err := d.set([]string{"mcp_servers"}, "berth", object{{"command", "c"}}); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := string(d.bytes()); got != want+"command = \"c\"\n" {
			t.Errorf("%q became\n%q", in, got)
		}
	}
}

func TestTOMLRefusesWhatItCannotEdit(t *testing.T) {
	for in, mention := range map[string]string{
		"model = \n": "invalid TOML at line 1",
		"[mcp_servers]\nberth = { command = \"x\" }\n":    `server "berth" is written inline under [mcp_servers]`,
		"mcp_servers = { berth = { command = \"x\" } }\n": "written as keys of the file's top",
		"mcp_servers.berth.command = \"x\"\n":             "written as keys of the file's top",
		"[[mcp_servers]]\nname = \"x\"\n":                 "array of tables",
		"a = 1\na = 2\n":                                  "invalid TOML",
	} {
		d, err := parseTOML([]byte(in))
		if err == nil {
			err = d.set([]string{"mcp_servers"}, "berth", codexEntry)
		}
		if err == nil || !strings.Contains(err.Error(), mention) {
			t.Errorf("%q: %v, want an error mentioning %q", in, err, mention)
		}
	}
}

func mustTOML(t *testing.T, in string) *tomlDoc {
	t.Helper()
	d, err := parseTOML([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// FuzzTOMLSet checks the TOML editor against go-toml: a file is either
// refused, or comes back as TOML that go-toml reads as the same document
// with the entry set and every other key equal, and setting again is a
// no-op; removing the entry then leaves the other keys as they were.
func FuzzTOMLSet(f *testing.F) {
	for _, s := range []string{"", appFiles["codex"].body, "[mcp_servers.berth]\ncommand = 1\n[mcp_servers.berth.env]\nA='b'\n",
		"a = \"\"\"\n[mcp_servers.x]\n\"\"\"\n", "[mcp_servers]\n[mcp_servers.a]\ncommand='x'\n# c\n\n[x]\n", "x = [\n1,\n2,\n]\n[mcp_servers.\"berth\"]\nurl=''\n",
		"\r\n[a]\r\nb=1\r\n", "[mcp_servers.berth]", "[ mcp_servers . berth ]\ncommand='a'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, err := parseTOML([]byte(in))
		if err != nil {
			return
		}
		if err := d.set([]string{"mcp_servers"}, "berth", codexEntry); err != nil {
			return
		}
		out := d.bytes()
		var before, after map[string]any
		if toml.Unmarshal([]byte(in), &before) != nil {
			t.Fatalf("parseTOML accepted what go-toml refuses: %q", in)
		}
		if err := toml.Unmarshal(out, &after); err != nil {
			t.Fatalf("wrote what go-toml refuses (%v): %q -> %q", err, in, out)
		}
		if err := verify(formatTOML, []byte(in), out, []string{"mcp_servers"}, map[string]object{"berth": codexEntry}); err != nil {
			t.Fatalf("%v: %q", err, out)
		}
		sameBut(t, before, after, "berth")
		if err := d.set([]string{"mcp_servers"}, "berth", codexEntry); err != nil || string(d.bytes()) != string(out) {
			t.Fatalf("second set differs (%v): %q -> %q", err, out, d.bytes())
		}
		if err := d.remove([]string{"mcp_servers"}, "berth"); err != nil {
			t.Fatal(err)
		}
		var removed map[string]any
		if err := toml.Unmarshal(d.bytes(), &removed); err != nil {
			t.Fatalf("removal wrote what go-toml refuses (%v): %q", err, d.bytes())
		}
		sameBut(t, before, removed, "berth")
	})
}

// sameBut checks that after holds before's keys, and that its mcp_servers
// (or extensions) differ at most in entry name.
func sameBut(t *testing.T, before, after map[string]any, name string) {
	t.Helper()
	for k, v := range before {
		if k == "mcp_servers" || k == "extensions" {
			bm, _ := v.(map[string]any)
			am, _ := after[k].(map[string]any)
			for n, sv := range bm {
				if n != name && !reflect.DeepEqual(normalize(sv), normalize(am[n])) {
					t.Fatalf("server %q changed: %v -> %v", n, sv, am[n])
				}
			}
			continue
		}
		if !reflect.DeepEqual(normalize(v), normalize(after[k])) {
			t.Fatalf("key %q changed: %v -> %v", k, v, after[k])
		}
	}
}
