package ideconfig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

var gooseEntry = object{{"enabled", true}, {"type", "stdio"}, {"name", "berth"}, {"cmd", "/opt/bin/berth-shim"},
	{"args", []string{"--project", "/src/shop"}}, {"envs", map[string]string{}}, {"timeout", 300}}

func TestYAMLSetKeepsEveryOtherByte(t *testing.T) {
	in := appFiles["goose"].body
	d := mustYAML(t, in)
	if err := d.set([]string{"extensions"}, "berth", gooseEntry); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "    type: stdio\n# end", "    type: stdio\n  berth:\n    enabled: true\n    type: stdio\n    name: berth\n    cmd: /opt/bin/berth-shim\n    args:\n      - --project\n      - /src/shop\n    envs: {}\n    timeout: 300\n# end", 1)
	if diff := cmp.Diff(want, string(d.bytes())); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// Replacing it keeps its place; removing memory leaves the rest.
	changed := append(object{}, gooseEntry...)
	changed[3] = field{"cmd", "berth-shim"}
	if err := d.set([]string{"extensions"}, "berth", changed); err != nil {
		t.Fatal(err)
	}
	if got := string(d.bytes()); got != strings.Replace(want, "cmd: /opt/bin/berth-shim", "cmd: berth-shim", 1) {
		t.Fatalf("replaced:\n%s", got)
	}
	if err := d.remove([]string{"extensions"}, "memory"); err != nil {
		t.Fatal(err)
	}
	if got := string(d.bytes()); strings.Contains(got, "server-memory") || !strings.Contains(got, "  developer:\n") || !strings.Contains(got, "# end of extensions\nGOOSE_MODE: smart_approve\n") {
		t.Fatalf("removed:\n%s", got)
	}
}

func TestYAMLNewAndEmptyFiles(t *testing.T) {
	entry := object{{"cmd", "c"}, {"args", []string{}}}
	for in, want := range map[string]string{
		"":                                      "extensions:\n  berth:\n    cmd: c\n    args: []\n",
		"GOOSE_MODE: auto":                      "GOOSE_MODE: auto\nextensions:\n  berth:\n    cmd: c\n    args: []\n",
		"extensions:\nGOOSE_MODE: auto\n":       "extensions:\n  berth:\n    cmd: c\n    args: []\nGOOSE_MODE: auto\n",
		"extensions: {}\nGOOSE_MODE: auto\n":    "extensions:\n  berth:\n    cmd: c\n    args: []\nGOOSE_MODE: auto\n",
		"extensions:\n    a:\n        cmd: x\n": "extensions:\n    a:\n        cmd: x\n    berth:\n        cmd: c\n        args: []\n",
	} {
		d := mustYAML(t, in)
		if err := d.set([]string{"extensions"}, "berth", entry); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := string(d.bytes()); got != want {
			t.Errorf("%q became\n%q, want\n%q", in, got, want)
		}
	}
}

func TestYAMLRefusesWhatItCannotEdit(t *testing.T) {
	for in, mention := range map[string]string{
		"extensions: {a: {cmd: x}}\n": "not written as a block",
		"extensions: [1]\n":           "not written as a block",
		"- a\n":                       "not a mapping",
		"a: [\n":                      "invalid YAML",
	} {
		d, err := parseYAML([]byte(in))
		if err == nil {
			err = d.set([]string{"extensions"}, "berth", gooseEntry)
		}
		if err == nil || !strings.Contains(err.Error(), mention) {
			t.Errorf("%q: %v, want an error mentioning %q", in, err, mention)
		}
	}
}

func mustYAML(t *testing.T, in string) *yamlDoc {
	t.Helper()
	d, err := parseYAML([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// FuzzYAMLSet checks the YAML editor against yaml.v3 as FuzzTOMLSet
// checks the TOML one.
func FuzzYAMLSet(f *testing.F) {
	for _, s := range []string{"", appFiles["goose"].body, "extensions:\n  berth: 1\n", "extensions:\n", "a: 1\nextensions: {}\n",
		"extensions:\n  # c\n  a:\n    cmd: x\n\n  # d\n  berth:\n    cmd: y\nb: |\n  text\n", "extensions:\n- a\n", "extensions: null\n",
		"  extensions:\n    a: 1\n", "extensions:\n\ta: 1\n", "extensions:\n  a: &x 1\n  b: *x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, err := parseYAML([]byte(in))
		if err != nil {
			return
		}
		if err := d.set([]string{"extensions"}, "berth", gooseEntry); err != nil {
			return
		}
		out := d.bytes()
		var before, after map[string]any
		if yaml.Unmarshal([]byte(in), &before) != nil {
			return // a document yaml.v3 reads only as a node (merge keys and such)
		}
		if err := yaml.Unmarshal(out, &after); err != nil {
			t.Fatalf("wrote what yaml.v3 refuses (%v): %q -> %q", err, in, out)
		}
		if err := verify(formatYAML, []byte(in), out, []string{"extensions"}, map[string]object{"berth": gooseEntry}); err != nil {
			t.Fatalf("%v: %q -> %q", err, in, out)
		}
		sameBut(t, before, after, "berth")
		if err := d.set([]string{"extensions"}, "berth", gooseEntry); err != nil || string(d.bytes()) != string(out) {
			t.Fatalf("second set differs (%v): %q -> %q", err, out, d.bytes())
		}
	})
}
