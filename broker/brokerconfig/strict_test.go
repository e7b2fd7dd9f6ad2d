package brokerconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/api"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConfigFileMistakes: a mistake in the broker's file is an error at
// its line and column naming the key and the fix.
func TestConfigFileMistakes(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"duration", "mount_grace: 5 minutes\n", `:1:14: mount_grace: "5 minutes" is not a duration: use a Go duration such as 30s (units ns, us, ms, s, m, h)`},
		{"misspelt section", "port:\n  start: 6000\n", `:1:1: unknown key "port": did you mean "ports"?`},
		{"misspelt key", "ports:\n  begin: 6000\n", `:2:3: unknown key "ports.begin" (the keys under ports are end, start)`},
		{"wrong level", "start: 6000\n", `:1:1: unknown key "start": did you mean "ports.start"? (it belongs under ports)`},
		{"dashes", "mount-grace: 1m\n", `:1:1: unknown key "mount-grace": did you mean "mount_grace"?`},
		{"number", "ports:\n  start: six\n", `:2:10: ports.start: "six" is not a whole number: use a whole number such as 4242`},
		{"unclosed brace on line 2", "listen: 127.0.0.1:4241\nports: {start: 6000\nauth: none\n", `:3:1: invalid YAML: the '{' opened at 2:8 is not closed before this line: close it with '}' (fix the YAML there)`},
		{"server", "servers:\n  memory: {command: npx, share: team}\n", `:2:11: servers.memory.share "team": use project (one process per project, the default), repository (one process for every worktree of the project's git repository) or user (one process for every project)`},
		{"server field", "servers:\n  memory: {command: npx, arg: [x]}\n", `:2:26: unknown key "servers.memory.arg": did you mean "servers.memory.args"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			writeFile(t, file, tc.body)
			err := ReadConfig(NewViper(), file)
			if err == nil || err.Error() != file+tc.want {
				t.Fatalf("got  %v\nwant %s", err, file+tc.want)
			}
		})
	}
	// A good file with servers reads.
	file := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, file, "# mine\nports: {start: 6000, end: 6010}\nmount_grace: 1m\nrag:\n  allow_outside: [/srv]\nservers:\n  memory:\n    command: npx\n    call_timeout: 30s\n")
	v := NewViper()
	if err := ReadConfig(v, file); err != nil {
		t.Fatal(err)
	}
	c, err := ConfigFrom(v, "/h")
	if err != nil || c.PortStart != 6000 || c.MountGrace.String() != "1m0s" || len(c.AllowOutside) != 1 {
		t.Fatalf("%+v %v", c, err)
	}
}

// TestEnvironmentMistakes: a BERTH_ variable of the wrong form names
// itself; one that is a misspelt key names the key's.
func TestEnvironmentMistakes(t *testing.T) {
	for _, tc := range []struct{ env, value, want string }{
		{"BERTH_MOUNT_GRACE", "5 minutes", `BERTH_MOUNT_GRACE: "5 minutes" is not a duration: use a Go duration such as 30s (units ns, us, ms, s, m, h)`},
		{"BERTH_SESSION_TIMEOUT", "90", `BERTH_SESSION_TIMEOUT: "90" is not a duration: use a Go duration such as 1h (units ns, us, ms, s, m, h)`},
		{"BERTH_PORTS_START", "4242x", `BERTH_PORTS_START: "4242x" is not a whole number: use a whole number such as 4242`},
		{"BERTH_PORT_START", "6000", `BERTH_PORT_START is not a Berth setting: did you mean BERTH_PORTS_START? (rename the variable; docs/configuration.md lists them)`},
		{"BERTH_MOUNTGRACE", "1m", `BERTH_MOUNTGRACE is not a Berth setting: did you mean BERTH_MOUNT_GRACE? (rename the variable; docs/configuration.md lists them)`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			_, err := ConfigFrom(NewViper(), "/h")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	// Variables of other tools are left alone.
	t.Setenv("BERTH_SOMETHING_ELSE_ENTIRELY", "x")
	if _, err := ConfigFrom(NewViper(), "/h"); err != nil {
		t.Fatal(err)
	}
}

// TestFindConfig: where the broker's settings are read from.
func TestFindConfig(t *testing.T) {
	user := t.TempDir()
	t.Setenv("HOME", user)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv(api.ConfigEnv, "")
	def, err := api.UserStateHome()
	if err != nil {
		t.Fatal(err)
	}
	want, err := api.UserConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(def, api.ConfigName)

	cf, err := FindConfig("", def)
	if err != nil || cf.Path != "" || cf.Want != want {
		t.Fatalf("no file: %+v %v; want none, to be put at %s", cf, err, want)
	}
	writeFile(t, old, "auth: none\n")
	cf, _ = FindConfig("", def)
	if want != old && (cf.Path != old || !strings.Contains(cf.Notice, "old location "+old) || !strings.Contains(cf.Notice, "mv "+old+" "+want)) {
		t.Fatalf("old location: %+v", cf)
	}
	writeFile(t, want, "auth: token\n")
	cf, _ = FindConfig("", def)
	if cf.Path != want || (want != old && !strings.Contains(cf.Notice, old+" is not read")) {
		t.Fatalf("both: %+v", cf)
	}
	// XDG_CONFIG_HOME moves the user's file.
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	writeFile(t, filepath.Join(xdg, "berth", "config.yaml"), "")
	if cf, _ = FindConfig("", def); cf.Path != filepath.Join(xdg, "berth", "config.yaml") {
		t.Fatalf("XDG_CONFIG_HOME: %+v", cf)
	}
	// A home of its own reads only its own file, never the user's.
	own := t.TempDir()
	if cf, _ = FindConfig("", own); cf.Path != "" || cf.Want != filepath.Join(own, api.ConfigName) {
		t.Fatalf("own home: %+v", cf)
	}
	// Named: it must exist.
	if _, err := FindConfig(filepath.Join(own, "nope.yaml"), own); err == nil || !strings.Contains(err.Error(), "named by --config") {
		t.Fatalf("named missing: %v", err)
	}
	t.Setenv(api.ConfigEnv, want)
	if cf, _ = FindConfig("", own); cf.Path != want || !cf.Named {
		t.Fatalf("BERTH_CONFIG: %+v", cf)
	}
}
