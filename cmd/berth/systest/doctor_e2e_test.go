package systest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
)

// doctorLines runs `berth doctor` and checks that every line is a finding.
func doctorLines(t *testing.T, home string) (string, int) {
	t.Helper()
	out, code := berthCmd(t, home, "doctor")
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "berth doctor: ") {
			continue // the summary of a failed run
		}
		if !strings.HasPrefix(l, "ok ") && !strings.HasPrefix(l, "note ") && !strings.HasPrefix(l, "warn ") && !strings.HasPrefix(l, "FAIL ") {
			t.Errorf("doctor line %q is not a finding", l)
		}
		if strings.HasPrefix(l, "FAIL ") && !strings.Contains(l, " -- fix: ") {
			t.Errorf("doctor line %q names no fix", l)
		}
	}
	return out, code
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("doctor output lacks %q:\n%s", w, out)
		}
	}
}

func TestDoctorOnHealthyAndBrokenHomes(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home})
	root := brokertest.Project(t, "doc", nil)
	if out, code := berthCmd(t, home, "attach", root); code != 0 {
		t.Fatalf("attach: %s", out)
	}
	out, code := doctorLines(t, home)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor on a healthy home: exit %d\n%s", code, out)
	}
	mustContain(t, out,
		"ok    home "+home+" (mode 0700)",
		fmt.Sprintf("ok    broker pid %d answers", b.PID()),
		"ok    database",
		fmt.Sprintf("ok    versions: berth and broker %s (protocol %d)", api.Version, api.Protocol()),
		"ok    project doc: state file matches",
		fmt.Sprintf("ok    port range %d-%d:", b.Start, b.End),
	)

	// A berth newer than the running broker says so.
	cmd := exec.Command(filepath.Join(newBinaries(t), "berth"), "doctor")
	cmd.Env = append(os.Environ(), "BERTH_HOME="+home)
	newer, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(newer), fmt.Sprintf("FAIL  broker %s (protocol %d) is older than this berth %s (protocol %s) -- fix: `berth stop`", api.Version, api.Protocol(), newVersion, newProtocol)) {
		t.Fatalf("doctor of a newer berth: %v\n%s", err, newer)
	}

	// Broken: the broker is killed (socket and state file left behind) and
	// the home is opened to others. Only the home needs the user: the
	// next broker replaces the socket and removes the state file.
	b.Kill(t)
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	out, code = doctorLines(t, home)
	if code != 1 || strings.Count(out, "FAIL  ") != 1 {
		t.Fatalf("doctor on a broken home: exit %d\n%s", code, out)
	}
	mustContain(t, out,
		"FAIL  home "+home+" has mode 0755", "chmod 700 "+home,
		"warn  stale socket "+api.SocketPath(home)+": no broker answers on it -- the next broker replaces it",
		"warn  project doc: stale state file "+api.StatePath(root), "-- the next broker removes it",
		"ok    database", "(1 projects known)",
		"note  version: berth "+api.Version+" (commit ",
	)
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, code = doctorLines(t, home); code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor with only what the next broker repairs: exit %d\n%s", code, out)
	}
	// A process that holds the lock without answering is named, with the fix.
	lock, err := os.OpenFile(filepath.Join(home, api.LockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	lock.Truncate(0)
	lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	out, code = doctorLines(t, home)
	lock.Close()
	if code != 1 {
		t.Fatalf("doctor with a stuck lock holder: exit %d\n%s", code, out)
	}
	mustContain(t, out, fmt.Sprintf("FAIL  broker pid %d holds the lock but does not answer", os.Getpid()), fmt.Sprintf("fix: `kill %d`", os.Getpid()))

	// A corrupt database is named too.
	if err := os.WriteFile(filepath.Join(home, api.DBName), []byte(strings.Repeat("junk", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = doctorLines(t, home)
	if code != 0 {
		t.Fatalf("doctor with a corrupt database: exit %d\n%s", code, out)
	}
	mustContain(t, out, "warn  database: open "+filepath.Join(home, api.DBName)+": database file is corrupt", "-- the next broker moves it aside and rebuilds it")

	// A broker starts (it secures the home, replaces the socket, rebuilds
	// the database): what it repaired is reported, and nothing needs the user.
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	b = brokertest.StartBroker(t, brokertest.Options{Home: home})
	out, code = doctorLines(t, home)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor after the broker's repairs: exit %d\n%s", code, out)
	}
	mustContain(t, out, "warn  broker reported at start: berth.db was corrupt", "moved aside to", "ok    home "+home+" (mode 0700)",
		"warn  broker reported at start: home "+home+" had mode 0755, open to other accounts: it is now 0700")
	// The broker said so when it started, on stderr and in its log.
	if !strings.Contains(b.Stderr(), "had mode 0755, open to other accounts") {
		t.Errorf("the broker did not warn about the open home:\n%s", b.Stderr())
	}
}

// TestDoctorChecksTheIDEFilesAndConfigs: doctor reads the broker's config
// where the user keeps it, and the IDE files that run berth-shim: a
// missing shim or a file the IDE cannot read is a FAIL with the fix.
func TestDoctorChecksTheIDEFilesAndConfigs(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	home := userHome(t)
	env := userEnv(home)
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	userCfg := filepath.Join(userConfigDir(home), "berth", "config.yaml")
	oldCfg := filepath.Join(defaultHomeUnder(home), "config.yaml")

	writeFile(t, cursor, "{\n  // mine\n  \"mcpServers\": {\"berth\": {\"command\": \""+brokertest.Shim(t)+"\", \"args\": [\"--project\", \"${workspaceFolder}\"]},},\n}\n")
	out, code := runAs(t, env, "doctor")
	if code != 0 || !strings.Contains(out, "ok    Cursor: "+cursor+": server \"berth\" runs berth-shim") ||
		!strings.Contains(out, "note  no broker config file: the defaults apply (settings go in "+userCfg+")") {
		t.Fatalf("doctor with a good Cursor file: exit %d\n%s", code, out)
	}

	writeFile(t, cursor, `{"mcpServers": {"berth": {"command": "/gone/berth-shim", "args": []}}}`)
	writeFile(t, oldCfg, "log_level: debug\n")
	out, code = runAs(t, env, "doctor")
	if code != 1 || !strings.Contains(out, "FAIL  Cursor: "+cursor+": server \"berth\" runs /gone/berth-shim, which does not exist -- fix: `berth ide-config cursor --write`") ||
		!strings.Contains(out, "warn  config: reading settings from the old location "+oldCfg+": move the file to "+userCfg) {
		t.Fatalf("doctor with a gone shim and the old config location: exit %d\n%s", code, out)
	}

	writeFile(t, cursor, "{\"mcpServers\": {\"berth\": {\"command\": \"x\"}\n")
	writeFile(t, userCfg, "log_levl: debug\n")
	out, code = runAs(t, env, "doctor")
	if code != 1 || !strings.Contains(out, "FAIL  Cursor: "+cursor+": invalid JSON at line 2, column 1") ||
		!strings.Contains(out, "FAIL  broker config: "+userCfg+`:1:1: unknown key "log_levl": did you mean "log_level"?`) ||
		!strings.Contains(out, "warn  config: "+oldCfg+" is not read: the settings are read from "+userCfg) {
		t.Fatalf("doctor with a broken Cursor file and a misspelt key: exit %d\n%s", code, out)
	}
}
