package systest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
)

// TestVersionIsTheModulesAndItsCommit: `berth version` of a build from
// this checkout prints the module version and commit that the build
// information holds (what `go version -m` reads from the binary).
func TestVersionIsTheModulesAndItsCommit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the build has no commit to print")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-buildvcs=true", "-o", dir+string(filepath.Separator), "./cmd/berth")
	build.Dir = filepath.Join("..", "..", "..")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "berth")
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	field := func(re string) string {
		if m := regexp.MustCompile(re).FindSubmatch(info); m != nil {
			return string(m[1])
		}
		return ""
	}
	version := field(`(?m)^\tmod\tgithub.com/berth-dev/berth\t(\S+)`)
	// The commit: the VCS stamp (a clone, as CI's), else the one a
	// pseudo-version names, else none (a git worktree is not stamped).
	commit := "unknown"
	if rev := field(`(?m)^\tbuild\tvcs.revision=(\S+)`); rev != "" {
		commit = rev[:12]
		if field(`(?m)^\tbuild\tvcs.modified=(\S+)`) == "true" {
			commit += "-dirty"
		}
	} else if m := regexp.MustCompile(`-([0-9a-f]{12})$`).FindStringSubmatch(version); m != nil {
		commit = m[1]
	}
	if os.Getenv("CI") != "" && commit == "unknown" {
		t.Fatalf("a build from CI's clone carries no commit:\n%s", info)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "BERTH_HOME="+brokertest.Home(t))
	out, err := cmd.CombinedOutput()
	want := fmt.Sprintf("berth %s (commit %s, protocol %d)\nbroker not running", version, commit, api.Protocol())
	if err != nil || !strings.HasPrefix(string(out), want) {
		t.Fatalf("berth version: %v\n%s\nwant it to start with\n%s", err, out, want)
	}
}

// TestShimAndBrokerAgreeByProtocolNotVersion: a shim whose version is a
// pseudo-version, and one whose version is "(devel)", attach to an idle
// auto-started broker of another version string but the same protocol
// and leave it running; a shim of a newer protocol replaces it whatever
// its version string says.
func TestShimAndBrokerAgreeByProtocolNotVersion(t *testing.T) {
	t.Parallel()
	home := autostartHome(t)
	// The binaries of each version first: making them is not what the
	// deadline below bounds. The shims of the versions that find the
	// broker running come alone.
	attaching := []string{"v0.0.0-20261126061500-abcdef012345", "(devel)"}
	brokertest.BinariesVersion(t, "v9.9.9")
	for _, version := range attaching {
		brokertest.ShimVersion(t, version)
	}
	brokertest.BinariesProtocol(t, "(devel)", newProtocol)
	ctx := testCtx(t, 90*time.Second)
	root := brokertest.Project(t, "proto", nil)
	var brokerPID, newPID int
	killAtEnd(t, &brokerPID)
	killAtEnd(t, &newPID)

	// The broker, auto-started by a window of a release version.
	release := filepath.Join(brokertest.BinariesVersion(t, "v9.9.9"), "berth-shim")
	tr, _ := shimTransportBin(t, release, home, root, "BERTH_IDLE_TIMEOUT=60s")
	s := connectMCP(t, ctx, tr)
	brokerPID = getServerInfo(t, ctx, s).Server.PID
	s.Close()

	for _, version := range attaching {
		shim := brokertest.ShimVersion(t, version)
		tr, cmd := shimTransportBin(t, shim, home, root, "BERTH_IDLE_TIMEOUT=60s")
		stderr := &brokertest.SyncBuffer{}
		cmd.Stderr = stderr
		s := connectMCP(t, ctx, tr)
		if pid := getServerInfo(t, ctx, s).Server.PID; pid != brokerPID {
			t.Fatalf("a shim of %s reached broker %d, want the running %d (same protocol); it said:\n%s", version, pid, brokerPID, stderr.String())
		}
		s.Close()
		if strings.Contains(stderr.String(), "make way") || strings.Contains(stderr.String(), "older than this shim") {
			t.Errorf("a shim of %s took the broker of v9.9.9 for an older one:\n%s", version, stderr.String())
		}
	}

	// A newer protocol from a checkout build: the broker makes way.
	shim := filepath.Join(brokertest.BinariesProtocol(t, "(devel)", newProtocol), "berth-shim")
	tr2, cmd2 := shimTransportBin(t, shim, home, root, "BERTH_IDLE_TIMEOUT=60s")
	stderr := &brokertest.SyncBuffer{}
	cmd2.Stderr = stderr
	s2 := connectMCP(t, ctx, tr2)
	newPID = getServerInfo(t, ctx, s2).Server.PID
	if newPID == brokerPID || !strings.Contains(stderr.String(), "make way") {
		t.Fatalf("a shim of protocol %s kept the broker of protocol %d (pid %d); it said:\n%s", newProtocol, api.Protocol(), newPID, stderr.String())
	}
	h, err := api.NewUnixClient(api.SocketPath(home)).Health(ctx)
	if err != nil || h.Version != "(devel)" || h.Protocol != api.ParseProtocol(newProtocol) {
		t.Fatalf("health after the upgrade: %+v %v", h, err)
	}
}
