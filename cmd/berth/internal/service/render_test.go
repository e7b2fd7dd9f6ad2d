package service

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSystemdQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/berth":          "/usr/bin/berth",
		"/home/a b/berth":         `"/home/a b/berth"`,
		`/x/"q"\`:                 `"/x/\"q\"\\"`,
		"/home/100%/berth":        "/home/100%%/berth",
		"BERTH_HOME=/a dir/state": `"BERTH_HOME=/a dir/state"`,
	} {
		if got := systemdQuote(in, false); got != want {
			t.Errorf("systemdQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// A binary and home with spaces, quotes and % are quoted and escaped so that
// systemd accepts the unit (checked with systemd-analyze when installed).
func TestSystemdUnitWithAwkwardPathsVerifies(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("BERTH_REQUIRE_SYSTEMD_ANALYZE") != "" {
			t.Fatal("systemd-analyze is not installed (apt-get install systemd)")
		}
		t.Skip("systemd-analyze is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "my tools 100%", "berth")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(dir, SystemdUnitName)
	if err := os.WriteFile(unit, SystemdUnit(Spec{Berth: bin, Home: filepath.Join(dir, `state "50%"`)}), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := filepath.Join(dir, "rt")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sa, "verify", "--user", unit)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+rt, "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), SystemdUnitName) {
		t.Fatalf("systemd-analyze verify: %v\n%s\n%s", err, out, SystemdUnit(Spec{Berth: bin}))
	}
}

func TestCheckRefusesPathsSystemdCannotRun(t *testing.T) {
	sd, _ := TargetFor(KindSystemd, "/home/u", 1000)
	ld, _ := TargetFor(KindLaunchd, "/Users/u", 501)
	for _, bad := range []string{`/opt/my "x"/berth`, `/opt/it's/berth`, `/opt/a\\b/berth`, "/opt/a\tb/berth"} {
		if err := sd.Check(Spec{Berth: bad}); err == nil || !strings.Contains(err.Error(), "install berth in a folder") {
			t.Errorf("Check(%q) = %v, want a refusal naming the fix", bad, err)
		}
		if err := ld.Check(Spec{Berth: bad}); err != nil {
			t.Errorf("launchd Check(%q) = %v, want nil (XML escapes it)", bad, err)
		}
	}
	if err := sd.Check(Spec{Berth: "/home/u/my tools 100%/berth"}); err != nil {
		t.Errorf("spaces and %% are quoted and escaped, got %v", err)
	}
}

func TestLaunchdPlistEscapesPaths(t *testing.T) {
	spec := Spec{Berth: `/Users/a&b/<bin> "x"/berth`, Home: "/Users/a&b/state ]]> here"}
	var strs []string
	dec := xml.NewDecoder(strings.NewReader(string(LaunchdPlist(spec))))
	dec.Strict = true
	inString := false
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("plist XML: %v", err)
			}
			break
		}
		switch v := tok.(type) {
		case xml.StartElement:
			inString = v.Name.Local == "string"
		case xml.EndElement:
			inString = false
		case xml.CharData:
			if inString {
				strs = append(strs, string(v))
			}
		}
	}
	want := []string{LaunchdLabel, spec.Berth, "serve", spec.Home, spec.Home + "/berth.out", "Background"}
	if strings.Join(strs, "|") != strings.Join(want, "|") {
		t.Fatalf("plist strings %q, want %q", strs, want)
	}
}

func TestManagerState(t *testing.T) {
	sd, _ := TargetFor(KindSystemd, "/home/u", 1000)
	ld, _ := TargetFor(KindLaunchd, "/Users/u", 501)
	for _, c := range []struct {
		t         Target
		out, want string
	}{
		{sd, "active\n", "active"},
		{sd, "inactive\n", "inactive"},
		{sd, "Failed to connect to bus: No medium found\n", "Failed to connect to bus: No medium found"},
		{ld, "gui/501/dev.berth.broker = {\n\tactive count = 1\n\tpath = /Users/u/Library/LaunchAgents/dev.berth.broker.plist\n\tstate = running\n}\n", "state = running"},
		{ld, "Could not find service \"dev.berth.broker\" in domain for user gui: 501\n", `Could not find service "dev.berth.broker" in domain for user gui: 501`},
		{sd, "", ""},
	} {
		if got := c.t.ManagerState(c.out); got != c.want {
			t.Errorf("%s ManagerState(%q) = %q, want %q", c.t.Kind, c.out, got, c.want)
		}
	}
}
