// Package service renders the systemd user unit and the launchd agent that
// run the Berth broker, and knows where each belongs for the current user.
package service

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// Names of the installed files and the service.
const (
	SystemdUnitName = "berth.service"
	LaunchdLabel    = "dev.berth.broker"
)

// Spec is what a unit needs to know.
type Spec struct {
	Berth string // absolute path of the berth binary
	// Home is written as BERTH_HOME so the service uses exactly the home a shim
	// computes (an empty Home leaves the broker's own default).
	Home string
	// Specifiers keeps systemd's %-specifiers (e.g. %h) in Berth and Home
	// instead of escaping them; only the examples in deploy/ use it.
	Specifiers bool
	// Packaged is the unit the .deb and .rpm install for every user
	// (/usr/lib/systemd/user), rather than the one `berth service install` writes.
	Packaged bool
}

// SystemdUnit is the text of the systemd user unit for s.
func SystemdUnit(s Spec) []byte {
	q := func(v string) string { return systemdQuote(v, s.Specifiers) }
	var b bytes.Buffer
	if s.Packaged {
		b.WriteString(`# Berth broker as a systemd user service (installed by the berth package for every user).
#   systemctl --user enable --now berth
`)
	} else {
		b.WriteString(`# Berth broker as a systemd user service (written by ` + "`berth service install`" + `).
#   systemctl --user daemon-reload && systemctl --user enable --now berth
`)
	}
	b.WriteString(`# Status: berth service status; logs: journalctl --user -u berth, or berth.log in BERTH_HOME.
[Unit]
Description=Berth: local broker for MCP tools
Documentation=https://github.com/berth-dev/berth/blob/main/docs/configuration.md
# Keep retrying: while a broker a shim started holds the home (` + "`broker already running`" + `),
# shims use that one; the service takes over when it exits after its idle timeout.
StartLimitIntervalSec=0

[Service]
# The broker sends READY=1 on $NOTIFY_SOCKET once its control socket answers,
# and STOPPING=1 when it begins to unmount; ` + "`systemctl start`" + ` returns when shims can attach.
Type=notify
`)
	fmt.Fprintf(&b, "ExecStart=%s serve\n", q(s.Berth))
	if s.Home != "" {
		b.WriteString("# The home (socket berth.sock) a shim finds by default, so IDEs attach to this\n# broker instead of auto-starting their own.\n")
		fmt.Fprintf(&b, "Environment=%s\n", q("BERTH_HOME="+s.Home))
	}
	b.WriteString(`Restart=on-failure
RestartSec=5
# SIGTERM unmounts every project and removes its state file.
TimeoutStopSec=15
# The socket, database, token and state files are the user's alone.
UMask=0077

# Hardening that works in any user manager (no user namespaces needed):
NoNewPrivileges=yes
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictNamespaces=yes
MemoryDenyWriteExecute=yes
SystemCallArchitectures=native
# Unix sockets (control API, sd_notify) and loopback TCP (project endpoints).
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
# Not used, on purpose:
# - ProtectSystem=strict with ReadWritePaths=, ProtectHome=: the broker writes
#   each project's state file into the project itself, wherever it lives, and
#   the projects are not known when this unit is written; a project outside the
#   list would fail to mount. In a user manager these options also need
#   unprivileged user namespaces, which some distributions disable (the unit
#   would then fail to start at all).
# - PrivateTmp=: a project or BERTH_HOME under /tmp would get its state file or
#   socket in a private /tmp that IDEs and sub-agents never see.
# - PrivateNetwork=, IPAddressDeny=: sub-agents reach project endpoints over
#   loopback TCP; the broker binds only 127.0.0.1 by default.

[Install]
WantedBy=default.target
`)
	return b.Bytes()
}

// systemdQuote quotes v for a systemd value when it holds spaces or quotes,
// and escapes % (a specifier) unless keep is set.
func systemdQuote(v string, keep bool) string {
	if !keep {
		v = strings.ReplaceAll(v, "%", "%%")
	}
	if !strings.ContainsAny(v, " \t\"'\\") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(v) + `"`
}

// LaunchdPlist is the launchd agent for s.
func LaunchdPlist(s Spec) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Berth broker as a launchd user agent (written by ` + "`berth service install`" + `).
     launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/dev.berth.broker.plist
     Status: berth service status. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>` + LaunchdLabel + `</string>
  <key>ProgramArguments</key>
  <array>
    <string>` + xmlText(s.Berth) + `</string>
    <string>serve</string>
  </array>
`)
	if s.Home != "" {
		b.WriteString(`  <!-- The home (socket berth.sock) a shim finds by default. -->
  <key>EnvironmentVariables</key>
  <dict>
    <key>BERTH_HOME</key>
    <string>` + xmlText(s.Home) + `</string>
  </dict>
  <!-- Crash output; the broker's log is berth.log in the same folder. -->
  <key>StandardErrorPath</key>
  <string>` + xmlText(strings.TrimSuffix(s.Home, "/")+"/berth.out") + `</string>
`)
	}
	b.WriteString(`  <key>RunAtLoad</key>
  <true/>
  <!-- Started again when it fails (at most every 10 s: launchd's throttle), e.g.
       while a broker a shim started still holds the home; a clean exit stays stopped. -->
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ProcessType</key>
  <string>Background</string>
</dict>
</plist>
`)
	return b.Bytes()
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // writes to a strings.Builder never fail
	return b.String()
}
