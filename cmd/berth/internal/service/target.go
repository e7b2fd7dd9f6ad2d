package service

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Kinds of service manager.
const (
	KindSystemd = "systemd"
	KindLaunchd = "launchd"
)

// Target is where one kind of unit goes for a user and how to (de)activate it.
type Target struct {
	Kind    string
	Path    string   // the unit file
	Enable  []string // shell commands that load and start it
	Disable []string // shell commands to run before removing it
	Query   []string // the command that asks the manager about the unit
}

// TargetFor returns the target of kind for the user whose home directory is
// userHome and whose uid is uid.
func TargetFor(kind, userHome string, uid int) (Target, error) {
	switch kind {
	case KindSystemd:
		return Target{
			Kind:    kind,
			Path:    filepath.Join(userHome, ".config", "systemd", "user", SystemdUnitName),
			Enable:  []string{"systemctl --user daemon-reload", "systemctl --user enable --now berth"},
			Disable: []string{"systemctl --user disable --now berth", "systemctl --user daemon-reload"},
			Query:   []string{"systemctl", "--user", "is-active", SystemdUnitName},
		}, nil
	case KindLaunchd:
		p := filepath.Join(userHome, "Library", "LaunchAgents", LaunchdLabel+".plist")
		return Target{
			Kind:    kind,
			Path:    p,
			Enable:  []string{fmt.Sprintf("launchctl bootstrap gui/%d %s", uid, shellQuote(p))},
			Disable: []string{fmt.Sprintf("launchctl bootout gui/%d/%s", uid, LaunchdLabel)},
			Query:   []string{"launchctl", "print", fmt.Sprintf("gui/%d/%s", uid, LaunchdLabel)},
		}, nil
	}
	return Target{}, fmt.Errorf("service kind %q: use %s or %s", kind, KindSystemd, KindLaunchd)
}

// Check reports a spec the service manager could not run: systemd refuses
// an executable path holding quotes, backslashes or control characters.
func (t Target) Check(s Spec) error {
	if t.Kind != KindSystemd {
		return nil
	}
	if i := strings.IndexFunc(s.Berth, func(r rune) bool { return r < ' ' || r == 0x7f || r == '"' || r == '\'' || r == '\\' }); i >= 0 {
		return fmt.Errorf("systemd cannot run %q: its path holds %q; install berth in a folder without quotes, backslashes or control characters", s.Berth, s.Berth[i:i+1])
	}
	return nil
}

// Render is the content of the unit of t's kind for s.
func (t Target) Render(s Spec) []byte {
	if t.Kind == KindLaunchd {
		return LaunchdPlist(s)
	}
	return SystemdUnit(s)
}

// shellQuote quotes p for a POSIX shell when it needs it.
func shellQuote(p string) string {
	for _, r := range p {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
	}
	return p
}

// ManagerState summarizes what Query printed: systemd's is-active word, or
// launchd's "state = …" line; otherwise the first line of the output.
func (t Target) ManagerState(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if t.Kind == KindLaunchd {
		for _, l := range lines {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "state = ") {
				return l
			}
		}
	}
	return strings.TrimSpace(lines[0])
}
