package systest

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// userHome makes a temp HOME short enough for the unix socket in the
// default BERTH_HOME beneath it (~100 bytes at most).
func userHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "uh")
	if err != nil {
		dir = brokertest.Home(t)
	} else {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// userEnv is the test's environment for a user whose HOME is home: nothing
// that chooses Berth's home is inherited, so the defaults apply.
func userEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BERTH_") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "NOTIFY_SOCKET" || k == "PROJECT_ROOT" {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "HOME="+home), extra...)
}

// runAs runs the built berth with env and returns its combined output and exit code.
func runAs(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(brokertest.Berth(t), args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// defaultHomeUnder is the BERTH_HOME a shim computes for a user whose HOME is home.
func defaultHomeUnder(home string) string {
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "berth")
	}
	return filepath.Join(home, ".local", "state", "berth")
}

// unitFile is a parsed systemd unit: section -> key -> values in order.
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, text string) unitFile {
	t.Helper()
	u := unitFile{}
	section := ""
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("unit line %d: %q is not key=value inside a section", i+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// words splits a systemd command line or assignment list, honouring double quotes.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	inQ, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && inQ && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			inQ, have = !inQ, true
		case c == ' ' && !inQ:
			if have {
				out = append(out, strings.ReplaceAll(cur.String(), "%%", "%"))
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		out = append(out, strings.ReplaceAll(cur.String(), "%%", "%"))
	}
	return out
}

func TestServiceInstallWritesAVerifiedSystemdUnit(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	env := userEnv(home)
	unitPath := filepath.Join(home, ".config", "systemd", "user", "berth.service")

	out, code := runAs(t, env, "service", "install", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, unitPath) || !strings.Contains(out, "systemctl --user enable --now berth") {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	raw, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	u := parseUnit(t, string(raw))
	svc := u["Service"]
	want := map[string]string{"Type": "notify", "Restart": "on-failure", "NoNewPrivileges": "yes", "UMask": "0077"}
	for k, v := range want {
		if got := svc[k]; len(got) != 1 || got[0] != v {
			t.Errorf("[Service] %s = %q, want %q", k, got, v)
		}
	}
	if got := u["Install"]["WantedBy"]; len(got) != 1 || got[0] != "default.target" {
		t.Errorf("[Install] WantedBy = %q", got)
	}
	for _, k := range []string{"PrivateTmp", "ProtectHome", "ProtectSystem", "User"} {
		if _, ok := svc[k]; ok {
			t.Errorf("[Service] sets %s, which breaks state files in projects or needs root", k)
		}
	}
	if got := words(svc["ExecStart"][0]); len(got) != 2 || got[0] != brokertest.Berth(t) || got[1] != "serve" {
		t.Errorf("ExecStart = %q, want the absolute berth binary and serve", got)
	}
	if got := words(svc["Environment"][0]); len(got) != 1 || got[0] != "BERTH_HOME="+defaultHomeUnder(home) {
		t.Errorf("Environment = %q, want the default home", got)
	}
	verifySystemdUnit(t, home, unitPath)

	// Idempotent: a second install changes nothing.
	out, code = runAs(t, env, "service", "install", "--kind", "systemd")
	if again, _ := os.ReadFile(unitPath); code != 0 || string(again) != string(raw) || !strings.Contains(out, "up to date") {
		t.Fatalf("second install: exit %d, changed %v\n%s", code, string(again) != string(raw), out)
	}
	out, code = runAs(t, env, "service", "status", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, "installed at "+unitPath+" (up to date)") || !strings.Contains(out, "none answers") || !strings.Contains(out, "\nmanager: systemctl") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	out, code = runAs(t, env, "service", "uninstall", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, "systemctl --user disable --now berth") || !strings.Contains(out, "removed "+unitPath) {
		t.Fatalf("uninstall: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(unitPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unit still there after uninstall: %v", err)
	}
	out, code = runAs(t, env, "service", "status", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, "not installed") {
		t.Fatalf("status after uninstall: exit %d\n%s", code, out)
	}
	if out, code = runAs(t, env, "service", "uninstall", "--kind", "systemd"); code != 0 || !strings.Contains(out, "not installed") {
		t.Fatalf("second uninstall: exit %d\n%s", code, out)
	}
	if out, code = runAs(t, env, "service", "restart"); code != 2 || !strings.Contains(out, "install, uninstall or status") {
		t.Fatalf("unknown action: exit %d\n%s", code, out)
	}
}

// verifySystemdUnit runs `systemd-analyze verify --user` on the unit; any
// warning about it fails the test. .ci/run installs systemd.
func verifySystemdUnit(t *testing.T, home, unitPath string) {
	t.Helper()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("BERTH_REQUIRE_SYSTEMD_ANALYZE") != "" {
			t.Fatal("systemd-analyze is not installed (apt-get install systemd)")
		}
		t.Logf("systemd-analyze is not installed: the unit was checked by the parser above only")
		return
	}
	rt := filepath.Join(home, "rt")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sa, "verify", "--user", unitPath)
	cmd.Env = userEnv(home, "XDG_RUNTIME_DIR="+rt)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "berth.service") {
		t.Fatalf("systemd-analyze verify --user %s: %v\n%s", unitPath, err, out)
	}
}

// plistNode is a generic plist element.
type plistNode struct {
	XMLName  xml.Name
	Text     string      `xml:",chardata"`
	Children []plistNode `xml:",any"`
}

// plistDict turns a <dict> into key -> value element.
func plistDict(t *testing.T, d plistNode) map[string]plistNode {
	t.Helper()
	if d.XMLName.Local != "dict" || len(d.Children)%2 != 0 {
		t.Fatalf("not a dict of key/value pairs: %s with %d children", d.XMLName.Local, len(d.Children))
	}
	m := map[string]plistNode{}
	for i := 0; i < len(d.Children); i += 2 {
		if d.Children[i].XMLName.Local != "key" {
			t.Fatalf("dict entry %d is a <%s>, want <key>", i/2, d.Children[i].XMLName.Local)
		}
		m[d.Children[i].Text] = d.Children[i+1]
	}
	return m
}

func TestServiceInstallWritesALaunchdAgent(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	env := userEnv(home)
	plistPath := filepath.Join(home, "Library", "LaunchAgents", "dev.berth.broker.plist")
	out, code := runAs(t, env, "service", "install", "--kind", "launchd")
	if code != 0 || !strings.Contains(out, plistPath) || !strings.Contains(out, fmt.Sprintf("launchctl bootstrap gui/%d", os.Getuid())) {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	raw, err := os.ReadFile(plistPath)
	if err != nil {
		t.Fatal(err)
	}
	var root plistNode
	if err := xml.Unmarshal(raw, &root); err != nil {
		t.Fatalf("plist is not XML: %v", err)
	}
	if root.XMLName.Local != "plist" || len(root.Children) != 1 {
		t.Fatalf("root <%s> with %d children, want <plist> with one <dict>", root.XMLName.Local, len(root.Children))
	}
	d := plistDict(t, root.Children[0])
	if d["Label"].Text != "dev.berth.broker" {
		t.Errorf("Label = %q", d["Label"].Text)
	}
	args := d["ProgramArguments"].Children
	if len(args) != 2 || args[0].Text != brokertest.Berth(t) || args[1].Text != "serve" {
		t.Errorf("ProgramArguments = %+v", args)
	}
	if d["RunAtLoad"].XMLName.Local != "true" {
		t.Errorf("RunAtLoad = <%s/>", d["RunAtLoad"].XMLName.Local)
	}
	if ka := plistDict(t, d["KeepAlive"]); ka["SuccessfulExit"].XMLName.Local != "false" {
		t.Errorf("KeepAlive.SuccessfulExit = <%s/>, want <false/> (restart on crash only)", ka["SuccessfulExit"].XMLName.Local)
	}
	if ev := plistDict(t, d["EnvironmentVariables"]); ev["BERTH_HOME"].Text != defaultHomeUnder(home) {
		t.Errorf("BERTH_HOME = %q, want %q", ev["BERTH_HOME"].Text, defaultHomeUnder(home))
	}
	checkPlistWithPython(t, plistPath, map[string]any{
		"Label":                "dev.berth.broker",
		"ProgramArguments":     []any{brokertest.Berth(t), "serve"},
		"EnvironmentVariables": map[string]any{"BERTH_HOME": defaultHomeUnder(home)},
		"StandardErrorPath":    filepath.Join(defaultHomeUnder(home), "berth.out"),
		"RunAtLoad":            true,
		"KeepAlive":            map[string]any{"SuccessfulExit": false},
		"ProcessType":          "Background",
	})
	if runtime.GOOS == "darwin" {
		plutil, err := exec.LookPath("plutil")
		if err != nil {
			t.Skip("plutil is not installed: the plist was checked by the XML parser only")
		}
		if out, err := exec.Command(plutil, "-lint", plistPath).CombinedOutput(); err != nil {
			t.Fatalf("plutil -lint: %v\n%s", err, out)
		}
	}
	out, code = runAs(t, env, "service", "uninstall", "--kind", "launchd")
	if code != 0 || !strings.Contains(out, "launchctl bootout gui/") {
		t.Fatalf("uninstall: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(plistPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("plist still there after uninstall: %v", err)
	}
}

// The broker a service manager runs (the unit's own ExecStart and
// Environment, idle timeout 0) is the one a shim finds with no BERTH_HOME set.
func TestServiceUnitBrokerIsFoundByShim(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	env := userEnv(home)
	if out, code := runAs(t, env, "service", "install", "--kind", "systemd"); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	raw, err := os.ReadFile(filepath.Join(home, ".config", "systemd", "user", "berth.service"))
	if err != nil {
		t.Fatal(err)
	}
	svc := parseUnit(t, string(raw))["Service"]
	argv := words(svc["ExecStart"][0])
	unitEnv := env
	for _, e := range svc["Environment"] {
		unitEnv = append(unitEnv, words(e)...)
	}
	// Test-only: free loopback ports instead of 4241 and 4242-5242.
	start, end := brokertest.PortRange(t, 10)
	unitEnv = append(unitEnv, "BERTH_LISTEN=", fmt.Sprintf("BERTH_PORTS_START=%d", start), fmt.Sprintf("BERTH_PORTS_END=%d", end), "BERTH_MOUNT_GRACE=300ms")
	var notify *net.UnixConn
	if runtime.GOOS == "linux" { // systemd's readiness protocol, as a Type=notify unit gets it
		addr := &net.UnixAddr{Name: filepath.Join(home, "notify"), Net: "unixgram"}
		if notify, err = net.ListenUnixgram("unixgram", addr); err != nil {
			t.Fatal(err)
		}
		defer notify.Close()
		unitEnv = append(unitEnv, "NOTIFY_SOCKET="+addr.Name)
	}
	failOnBrokersLeft(t, defaultHomeUnder(home))
	svcCmd := exec.Command(argv[0], argv[1:]...)
	svcCmd.Env = unitEnv
	svcCmd.Stderr = newLogWriter(t, "service")
	if err := svcCmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := svcCmd.Process.Pid
	t.Cleanup(func() { brokertest.KillPID(pid) })
	ctx := testCtx(t, 60*time.Second)
	c := api.NewUnixClient(api.SocketPath(defaultHomeUnder(home)))
	if notify != nil {
		if got := readNotify(t, notify); got != "READY=1" {
			t.Fatalf("first sd_notify message %q, want READY=1", got)
		}
	}
	var h api.Health
	brokertest.Poll(10*time.Second, func() bool { // on Linux READY=1 came first
		h, err = c.Health(ctx)
		return err == nil
	})
	if err != nil || h.PID != pid || h.IdleTimeout != "" {
		t.Fatalf("service broker health = %+v, %v; want pid %d and no idle timeout", h, err, pid)
	}
	out, code := runAs(t, env, "service", "status", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("answering on %s: pid %d", api.SocketPath(defaultHomeUnder(home)), pid)) || !strings.Contains(out, "not started by a shim") {
		t.Fatalf("status with the service running: exit %d\n%s", code, out)
	}

	// An IDE's shim, with nothing but HOME, attaches to the service's broker.
	root := brokertest.Project(t, "svc", nil)
	shim := exec.Command(brokertest.Shim(t), "--project", root)
	brokertest.DieWithTest(shim)
	// Only in case it ever started a broker of its own: no fixed ports, a short idle.
	shim.Env = userEnv(home, "BERTH_LISTEN=", fmt.Sprintf("BERTH_PORTS_START=%d", start), fmt.Sprintf("BERTH_PORTS_END=%d", end), "BERTH_IDLE_TIMEOUT=2s")
	shim.Stderr = newLogWriter(t, "shim")
	s := connectMCP(t, ctx, &mcp.CommandTransport{Command: shim, TerminateDuration: 2 * time.Second})
	if info := getServerInfo(t, ctx, s); info.Server.PID != pid || info.Project.Root != root {
		t.Fatalf("shim reached broker %d for %s, want the service's %d for %s", info.Server.PID, info.Project.Root, pid, root)
	}
	if sf, err := api.ReadStateFile(root); err != nil || sf.PID != pid {
		t.Fatalf("state file %+v, %v; want pid %d", sf, err, pid)
	}
	if _, err := os.Stat(filepath.Join(defaultHomeUnder(home), "berth.out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the shim auto-started a broker of its own (berth.out exists): %v", err)
	}

	// The IDE closes; the service manager stops the broker: STOPPING=1, exit 0,
	// state file gone. (A shim still running would reconnect and start a broker.)
	if err := s.Close(); err != nil {
		t.Fatalf("close the shim's session: %v", err)
	}
	if err := svcCmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if notify != nil {
		if got := readNotify(t, notify); got != "STOPPING=1" {
			t.Fatalf("sd_notify message at shutdown %q, want STOPPING=1", got)
		}
	}
	if err := brokertest.WaitExit(svcCmd, 20*time.Second); err != nil {
		t.Fatalf("service broker after SIGTERM: %v", err)
	}
	if _, err := os.Stat(api.StatePath(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left after the service stopped: %v", err)
	}
}

// readNotify reads one sd_notify datagram, waiting at most 20 s.
func readNotify(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no sd_notify message: %v", err)
	}
	return strings.TrimSpace(string(buf[:n]))
}

// Installing while a shim's broker runs says how the service takes over.
func TestServiceInstallNamesARunningAutostartedBroker(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	bh := defaultHomeUnder(home)
	if err := os.MkdirAll(bh, 0o700); err != nil {
		t.Fatal(err)
	}
	b := brokertest.StartBroker(t, brokertest.Options{Home: bh, Args: []string{"--autostarted"}})
	env := userEnv(home)
	out, code := runAs(t, env, "service", "install", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("A broker a shim started runs now (pid %d)", b.PID())) || !strings.Contains(out, "berth stop") {
		t.Fatalf("install with an auto-started broker running: exit %d\n%s", code, out)
	}
	out, code = runAs(t, env, "service", "status", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("pid %d", b.PID())) || !strings.Contains(out, "started by a shim: exits after 10m0s") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
}

// A changed unit is replaced with a backup; a unit linked from elsewhere is
// written through the link, which stays.
func TestServiceInstallUpdatesAndKeepsLinks(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	env := userEnv(home)
	unitDir := filepath.Join(home, ".config", "systemd", "user")
	dotfiles := filepath.Join(home, "dotfiles")
	for _, d := range []string{unitDir, dotfiles} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	real := filepath.Join(dotfiles, "berth.service")
	edited := "[Service]\nExecStart=/old/berth serve\n"
	if err := os.WriteFile(real, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(unitDir, "berth.service")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	out, code := runAs(t, env, "service", "install", "--kind", "systemd")
	if code != 0 || !strings.Contains(out, "updated "+real) {
		t.Fatalf("install over an edited unit: exit %d\n%s", code, out)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if bak, _ := os.ReadFile(real + ".bak"); string(bak) != edited {
		t.Fatalf("backup holds %q, want the edited unit", bak)
	}
	if got, _ := os.ReadFile(link); !strings.Contains(string(got), "ExecStart="+brokertest.Berth(t)+" serve") {
		t.Fatalf("unit through the link:\n%s", got)
	}
}

// checkPlistWithPython reads the plist with Python's plistlib, a second,
// independent plist parser, when python3 is installed.
func checkPlistWithPython(t *testing.T, path string, want map[string]any) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 is not installed: the plist was checked by encoding/xml only")
		return
	}
	out, err := exec.Command(py, "-c", "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))", path).CombinedOutput()
	if err != nil {
		t.Fatalf("plistlib refuses %s: %v\n%s", path, err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plist as plistlib reads it (-want +got):\n%s", diff)
	}
}
