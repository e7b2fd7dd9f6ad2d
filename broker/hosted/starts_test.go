package hosted

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// The counted helper (BERTH_HOSTED_HELPER=counted) runs the server its
// arguments name and counts, in COUNTED_FILE, how many servers are in their
// start at once, as the processes see it: from the helper's own start
// until the server has answered tools/list (that is inside the pool's start
// turn, which ends after the whole first listing). The file holds "now
// peak", updated under an flock. COUNTED_DELAY_MS delays the server's start,
// as a slow machine would; COUNTED_CHILD_HELPER is the child's
// BERTH_HOSTED_HELPER (the fake server), "" for a real one.
func runCounted() {
	file := os.Getenv("COUNTED_FILE")
	if err := countStart(file, +1); err != nil {
		fmt.Fprintln(os.Stderr, "counted:", err)
		os.Exit(2)
	}
	if ms, _ := strconv.Atoi(os.Getenv("COUNTED_DELAY_MS")); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Env = append(os.Environ(), "BERTH_HOSTED_HELPER="+os.Getenv("COUNTED_CHILD_HELPER"))
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "counted:", err)
		os.Exit(2)
	}
	r := bufio.NewReaderSize(out, 1<<16)
	listed := false
	for {
		line, err := r.ReadBytes('\n')
		os.Stdout.Write(line)
		if !listed && bytes.Contains(line, []byte(`"tools":[`)) {
			listed = true
			if err := countStart(file, -1); err != nil {
				fmt.Fprintln(os.Stderr, "counted:", err)
			}
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		os.Exit(1)
	}
}

// countStart adds d to the count of file under an flock and keeps its peak.
func countStart(file string, d int) error {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	var now, peak int
	if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
		if _, err := fmt.Sscan(string(b), &now, &peak); err != nil {
			return fmt.Errorf("read %s: %w", file, err)
		}
	}
	now += d
	peak = max(peak, now)
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt([]byte(fmt.Sprintf("%d %d\n", now, peak)), 0)
	return err
}

// counted reads the count file: servers in their start now, and the peak.
func counted(t testing.TB, file string) (now, peak int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(string(b), &now, &peak); err != nil {
		t.Fatalf("count file %q: %v", b, err)
	}
	return now, peak
}

// countedDecl declares a server run through the counted helper.
func countedDecl(t testing.TB, name, file string, delay time.Duration, child string, command string, args ...string) Decl {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BERTH_HOSTED_HELPER": "counted", "COUNTED_FILE": file,
		"COUNTED_DELAY_MS": strconv.Itoa(int(delay / time.Millisecond)), "COUNTED_CHILD_HELPER": child,
		"MEMORY_FILE_PATH": filepath.Join(filepath.Dir(file), name+".jsonl")}
	return Decl{Name: name, Origin: OriginUser, Server: validServer(exe, append([]string{command}, args...), env)}
}

// startAll lists the tools of a project declaring decls through a real
// client session, as a window's first tools/list does (it starts every
// lazy server), and checks that every server runs, started once.
func startAll(t *testing.T, opts Options, decls []Decl, toolOf func(Decl) string) {
	t.Helper()
	ctx := testCtx(t, 3*time.Minute)
	hp := openProject(t, newPool(t, opts), "p", decls...)
	s := connect(t, hp, sessionOpts{})
	names := toolNames(t, ctx, s)
	listed := strings.Join(names, " ")
	for _, d := range decls {
		if want := toolOf(d); !strings.Contains(" "+listed+" ", " "+want+" ") {
			t.Errorf("the first tools/list lacks %s", want)
		}
		st := statusOf(t, hp, d.Name)
		if st.State != StateRunning || st.Restarts != 0 {
			t.Errorf("%s: %s after %d restarts (last error %q); want running, started once", d.Name, st.State, st.Restarts, st.LastError)
		}
	}
}

// TestManyServersStartInTurns: a project declaring 4 server-memory
// servers, all lazy, is listed once; the pool starts them at most
// MaxStarting (2) at a time, in two turns, and every one comes up at its
// first start. Started together, all four would be in their start at once.
// (TestStartTimeoutCountsFromTurn runs more turns, of servers that start
// without Node.)
func TestManyServersStartInTurns(t *testing.T) {
	node, script := brokertest.NPMServer(t, "server-memory")
	file := filepath.Join(t.TempDir(), "count")
	var decls []Decl
	for i := range 4 {
		decls = append(decls, countedDecl(t, fmt.Sprintf("m%02d", i), file, 0, "", node, script))
	}
	const limit = 2
	startAll(t, Options{MaxStarting: limit, ListWait: 2 * time.Minute, StartTimeout: time.Minute}, decls,
		func(d Decl) string { return d.Name + "__read_graph" })
	now, peak := counted(t, file)
	if peak > limit || peak < 1 || now != 0 {
		t.Errorf("servers in their start: peak %d, now %d; want a peak of at most %d, and none now", peak, now, limit)
	}
}

// TestStartTimeoutCountsFromTurn: eight servers that each take 1.5 s to
// start, two at a time, take longer than their 5 s StartTimeout all
// together (the last turn begins at 4.5 s and ends at 6 s at the
// earliest); each still comes up at its first start, because its timeout
// counts from its turn. (Each start has 3.5 s to spare, for a loaded
// machine.)
func TestStartTimeoutCountsFromTurn(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "count")
	var decls []Decl
	for i := range 8 {
		decls = append(decls, countedDecl(t, fmt.Sprintf("f%02d", i), file, 1500*time.Millisecond, "server", exe))
	}
	const limit = 2
	opts := testOptions()
	opts.MaxStarting, opts.StartTimeout, opts.ListWait = limit, 5*time.Second, 2*time.Minute
	startAll(t, opts, decls, func(d Decl) string { return d.Name + "__echo" })
	if now, peak := counted(t, file); peak > limit || peak < 1 || now != 0 {
		t.Errorf("servers in their start: peak %d, now %d; want a peak of at most %d, and none now", peak, now, limit)
	}
}

// TestBackoffSpread: the delay before a restart doubles per crash up to
// BackoffMax and is drawn from the upper half of that, so that servers
// that crashed together do not restart together.
func TestBackoffSpread(t *testing.T) {
	lo, hi := 250*time.Millisecond, 30*time.Second
	for n := 1; n <= 80; n++ {
		full := hi
		if n <= 8 {
			full = min(lo<<(n-1), hi)
		}
		seen := map[time.Duration]bool{}
		for range 50 {
			d := backoff(n, lo, hi)
			if d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("backoff(%d) drew %d distinct delays in 50: restarts would keep in step", n, len(seen))
		}
	}
}
