// Package bench is berth-bench: end-to-end benchmarks of real Berth
// processes against their peers, measured side by side in one run.
//
//	go run ./cmd/berth-bench [load|e2e|hosted|hostile|scale|worktrees|all] [flags]
//
// e2e: warm attach and cold start of berth-shim, the forwarding hop of a
// small tool call (peer: mcp-remote, installed with npm into the user cache
// on first use), the standards search against bleve (`go test -bench`
// in the source tree), and a hosted MCP server (the npm servers of the
// tests, installed into the user cache) against running it per window.
// hostile: another project's initialize (200 new sessions) while a
// hostile input runs on the same broker (an index saved over and over,
// batches of large reads, a hosted server flooding a session that does not
// read, attaches of a nested config), with the broker's CPU and peak RSS.
// load: P projects mounted (broker RSS, mount time,
// memory per idle project), then S concurrent sessions calling
// get_server_info for a bounded time (calls/s, latency, errors, RSS,
// goroutines before and after). scale: how the broker's RSS, goroutines,
// open files and one call's latency grow with projects, live HTTP
// sessions, hosted servers and a project's files (and the index build
// time), with each row's cost per unit (not part of all: it runs for
// minutes). worktrees: git worktrees of one repository sharing one search
// index (the index time and RSS of k worktrees, a branch switch and a new
// worktree equal to a sibling, against one worktree alone; not part of
// all). It prints a markdown table and writes the
// figures as JSON lines (latest.jsonl and a dated copy) and in Go benchmark
// format (latest.txt, for benchstat).
//
// Every process it starts runs on loopback with a temporary BERTH_HOME and
// ports from a free range, and is stopped by its pid.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/spf13/pflag"
)

// Options are the sizes and switches of a run.
type Options struct {
	Mode        string // load, e2e, hosted, hostile or all
	NoPeer      bool
	Out         string // directory of the raw output; "" = docs/bench in the source tree, else ./berth-bench
	Bin         string // directory holding berth and berth-shim; "" = build them from the source tree
	Baseline    string // directory holding another berth: the hosted hop runs on it too, interleaved; "" = none
	Profile     string // directory for the broker's CPU and heap profiles under load and the hosted hop's calls; "" = none
	Keep        bool   // keep the temporary directory (homes, logs, projects) for a look afterwards
	Launches    int
	ColdRuns    int
	ColdFiles   int
	HopCalls    int
	Windows     int // windows of the hosted first-answer figure
	SearchFiles int
	Projects    int
	Files       int // standards files per project of the scale figure
	Sessions    int
	Duration    time.Duration
	// HostileSamples and HostileFiles size the hostile figures: the
	// initializes measured per load, the files of the index-save load.
	HostileSamples int
	HostileFiles   int
	HostileLoads   []string // the hostile loads to run, by name; empty: all
	// The scale figures' counts (each ascending) and timed calls per row.
	ScaleProjects, ScaleSessions, ScaleServers, ScaleFiles []int
	ScaleCalls                                             int
	ScaleGroups                                            []string // the scale groups to run, by name; empty: all
	// GatewayCalls are the TypeScript SDK client's calls per subject of
	// the gateway comparison (hosted: Berth against mcp-hub).
	GatewayCalls int
	// Worktrees and WorktreeFiles size the worktrees figures: worktrees of
	// one repository attached one after another, files in each.
	Worktrees, WorktreeFiles int

	Stdout, Stderr io.Writer

	// staticShim is a berth-shim built without cgo, measured beside
	// Bin's (the package's tests hand one they built from the source tree
	// to a run given the tests' build); "" = the one built with the
	// binaries, none with --bin.
	staticShim string
}

// ParseArgs reads berth-bench's arguments; the defaults are the documented run.
func ParseArgs(args []string) (Options, error) {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := Options{Stdout: os.Stdout, Stderr: os.Stderr}
	quick := fs.Bool("quick", false, "tiny sizes: checks that everything runs, figures mean little")
	fs.BoolVar(&o.NoPeer, "no-peer", false, "skip the Node peer (mcp-remote) rows")
	fs.StringVar(&o.Out, "out", "", "directory for latest.jsonl, its dated copy and latest.txt (default docs/bench in the source tree)")
	fs.StringVar(&o.Bin, "bin", "", "directory holding berth and berth-shim (default: build them from the source tree)")
	fs.StringVar(&o.Baseline, "baseline", "", "directory holding another build of berth (say, of the main branch): the hosted hop's HTTP calls run on a broker of it too, interleaved, for before/after ratios")
	fs.StringVar(&o.Profile, "profile", "", "write the broker's CPU and heap profiles under load (and under the hosted hop's calls) into this directory")
	fs.BoolVar(&o.Keep, "keep", false, "keep the temporary homes, logs and projects (the path is printed)")
	fs.IntVar(&o.Launches, "launches", 50, "warm attach launches per subject")
	fs.IntVar(&o.ColdRuns, "cold-runs", 7, "cold starts")
	fs.IntVar(&o.ColdFiles, "cold-files", 1000, "standards files of the cold start project")
	fs.IntVar(&o.HopCalls, "hop-calls", 1000, "tool calls per subject of the forwarding hops")
	fs.IntVar(&o.Windows, "windows", 30, "new windows per subject of the hosted server's first answer")
	fs.IntVar(&o.SearchFiles, "search-files", 10000, "files of the search corpus")
	fs.IntVar(&o.Projects, "projects", 50, "projects mounted for the scale and load figures")
	fs.IntVar(&o.Files, "files", 100, "standards files per project of the scale figure")
	fs.IntVar(&o.Sessions, "sessions", 20, "concurrent sessions of the load figure")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "how long the load runs")
	fs.IntVar(&o.HostileSamples, "hostile-samples", 200, "initializes of another project measured during each hostile load")
	fs.IntVar(&o.HostileFiles, "hostile-files", 4000, "standards files of the project whose index is saved over and over (hostile)")
	fs.IntSliceVar(&o.ScaleProjects, "scale-projects", []int{1, 10, 50, 200}, "projects mounted at each row of the scale figures")
	fs.IntSliceVar(&o.ScaleSessions, "scale-sessions", []int{10, 100, 1000}, "live HTTP sessions at each row of the scale figures")
	fs.IntSliceVar(&o.ScaleServers, "scale-servers", []int{1, 5, 20}, "hosted servers at each row of the scale figures")
	fs.IntSliceVar(&o.ScaleFiles, "scale-files", []int{1000, 10000, 50000}, "files of the project indexed at each row of the scale figures")
	fs.StringSliceVar(&o.ScaleGroups, "scale-groups", nil, "the scale groups to run (projects, sessions, servers, index; default all)")
	fs.IntVar(&o.ScaleCalls, "scale-calls", 300, "timed get_server_info calls per row of the scale figures")
	fs.IntVar(&o.GatewayCalls, "gateway-calls", 300, "calls per subject of the TypeScript SDK client against Berth and mcp-hub (hosted)")
	fs.IntVar(&o.Worktrees, "worktrees", 8, "worktrees of one repository attached one after another (worktrees)")
	fs.IntVar(&o.WorktreeFiles, "worktree-files", 2000, "standards files of the repository (worktrees)")
	fs.StringSliceVar(&o.HostileLoads, "hostile-loads", nil, "the hostile loads to run (none, index-save, batch, flood, nested-config; default all)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return o, fmt.Errorf("usage: go run ./cmd/berth-bench [load|e2e|hosted|hostile|scale|worktrees|all] [flags]\n%s", fs.FlagUsages())
		}
		return o, fmt.Errorf("%w (see go run ./cmd/berth-bench --help)", err)
	}
	switch fs.NArg() {
	case 0:
		o.Mode = "all"
	case 1:
		o.Mode = fs.Arg(0)
	default:
		return o, fmt.Errorf("one mode only: load, e2e, hosted, hostile, scale, worktrees or all (got %q)", strings.Join(fs.Args(), " "))
	}
	if o.Mode == floorMode { // the floor of the HTTP figures, started by the bench itself
		return o, nil
	}
	if o.Mode != "load" && o.Mode != "e2e" && o.Mode != "hosted" && o.Mode != "hostile" && o.Mode != "scale" && o.Mode != "worktrees" && o.Mode != "all" {
		return o, fmt.Errorf("unknown mode %q: use load, e2e, hosted, hostile, scale, worktrees or all", o.Mode)
	}
	if *quick {
		// One window and one cold start run every step of theirs: each
		// more starts Node or a broker again.
		o.Launches, o.ColdRuns, o.ColdFiles, o.HopCalls, o.SearchFiles, o.Windows = 3, 1, 30, 20, 60, 1
		o.Projects, o.Files, o.Sessions, o.Duration = 3, 5, 4, time.Second
		o.HostileSamples, o.HostileFiles = 10, 50
		o.ScaleProjects, o.ScaleSessions, o.ScaleServers, o.ScaleFiles, o.ScaleCalls = []int{1, 3}, []int{2, 5}, []int{1, 2}, []int{100, 300}, 10
		o.GatewayCalls = 10
		o.Worktrees, o.WorktreeFiles = 3, 40
	}
	for name, v := range map[string]int{"launches": o.Launches, "cold-runs": o.ColdRuns, "cold-files": o.ColdFiles,
		"hop-calls": o.HopCalls, "search-files": o.SearchFiles, "windows": o.Windows, "projects": o.Projects, "files": o.Files, "sessions": o.Sessions,
		"hostile-samples": o.HostileSamples, "hostile-files": o.HostileFiles, "scale-calls": o.ScaleCalls, "gateway-calls": o.GatewayCalls, "worktree-files": o.WorktreeFiles} {
		if v < 1 || v > 100_000 {
			return o, fmt.Errorf("--%s %d: use 1 to 100000", name, v)
		}
	}
	for _, c := range []struct {
		name   string
		counts []int
		most   int
	}{{"scale-projects", o.ScaleProjects, 500}, {"scale-sessions", o.ScaleSessions, 5000}, {"scale-servers", o.ScaleServers, 50}, {"scale-files", o.ScaleFiles, 100_000}} {
		if err := ascending(c.name, c.counts, c.most); err != nil {
			return o, err
		}
	}
	for _, g := range o.ScaleGroups {
		if g != "projects" && g != "sessions" && g != "servers" && g != "index" {
			return o, fmt.Errorf("--scale-groups %s: use projects, sessions, servers or index", g)
		}
	}
	if o.Worktrees < 2 || o.Worktrees > 50 {
		return o, fmt.Errorf("--worktrees %d: use 2 to 50", o.Worktrees)
	}
	if o.Projects > 500 {
		return o, fmt.Errorf("--projects %d: at most 500", o.Projects)
	}
	if o.Baseline != "" {
		if fi, err := os.Stat(filepath.Join(o.Baseline, "berth")); err != nil || fi.IsDir() {
			return o, fmt.Errorf("--baseline %s: no berth binary there (build one with go build -o DIR/ ./cmd/berth)", o.Baseline)
		}
		if o.Mode == "load" || o.Mode == "hostile" || o.Mode == "scale" || o.Mode == "worktrees" {
			return o, errors.New("--baseline runs with the hosted hop: use it with hosted, e2e or all")
		}
	}
	if o.Duration <= 0 || o.Duration > 10*time.Minute {
		return o, fmt.Errorf("--duration %s: use a positive duration up to 10m", o.Duration)
	}
	return o, nil
}

// ascending checks that counts are ascending, from 1 to most.
func ascending(name string, counts []int, most int) error {
	if len(counts) == 0 {
		return fmt.Errorf("--%s: give at least one count", name)
	}
	for i, n := range counts {
		if n < 1 || n > most || (i > 0 && n <= counts[i-1]) {
			return fmt.Errorf("--%s %v: ascending counts from 1 to %d", name, counts, most)
		}
	}
	return nil
}

// runner holds one run's state.
type runner struct {
	o        Options
	bin      binaries
	src      string // module root of a Berth source tree, or ""
	tmp      string
	rs       *results
	peer     []string // the command that runs mcp-remote, nil when skipped
	peerSkip string
	cleanup  []func()
	started  time.Time
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.o.Stderr, "bench: "+format+"\n", args...)
}

// RunOptions runs the benchmarks of o.Mode, prints the table and writes the raw output.
func RunOptions(ctx context.Context, o Options) (err error) {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Mode == floorMode {
		return serveFloor(ctx, os.Stdin, o.Stdout)
	}
	r := &runner{o: o, started: time.Now(), src: sourceTree()}
	r.rs = &results{run: r.started.UTC().Format(time.RFC3339)}
	if r.tmp, err = os.MkdirTemp("", "berth-bench-"); err != nil {
		return err
	}
	if o.Keep {
		defer r.progress("kept %s", r.tmp)
	} else {
		defer os.RemoveAll(r.tmp)
	}
	defer func() {
		for _, f := range r.cleanup {
			f()
		}
	}()
	if r.bin, err = r.binaries(ctx); err != nil {
		return err
	}
	e2e := o.Mode == "e2e" || o.Mode == "all"
	switch {
	case !e2e:
	case o.NoPeer:
		r.peerSkip = "--no-peer"
	default:
		if r.peer, err = installPeer(ctx, o.Stderr); err != nil {
			return err
		}
	}
	if e2e {
		if err := r.runE2E(ctx); err != nil {
			return err
		}
	}
	if o.Mode == "hosted" {
		if err := r.hostedServers(ctx); err != nil {
			return fmt.Errorf("hosted servers: %w", err)
		}
	}
	if o.Mode == "load" || o.Mode == "all" {
		if err := r.scaleAndLoad(ctx); err != nil {
			return fmt.Errorf("scale and load: %w", err)
		}
	}
	if o.Mode == "hostile" || o.Mode == "all" {
		if err := r.hostile(ctx); err != nil {
			return fmt.Errorf("hostile: %w", err)
		}
	}
	if o.Mode == "scale" {
		if err := r.scale(ctx); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
	}
	if o.Mode == worktreesBench {
		if err := r.worktrees(ctx); err != nil {
			return fmt.Errorf("worktrees: %w", err)
		}
	}
	machine := machineLine(ctx)
	out := o.Out
	if out == "" {
		out = "berth-bench"
		if r.src != "" {
			out = filepath.Join(r.src, "docs", "bench")
		}
	}
	paths, err := writeRaw(out, r.rs, r.started, machine)
	if err != nil {
		return fmt.Errorf("write the raw output: %w", err)
	}
	fmt.Fprintf(o.Stdout, "berth-bench %s, %s\n%s\n\n", o.Mode, r.rs.run, machine)
	if o.Mode == "scale" {
		writeScaleTable(o.Stdout, r.rs, o)
	} else {
		writeTable(o.Stdout, r.rs, o.Mode)
	}
	fmt.Fprintf(o.Stdout, "\nraw: %s\n", strings.Join(paths, ", "))
	return nil
}

func (r *runner) runE2E(ctx context.Context) error {
	e, err := r.startE2E(ctx)
	if err != nil {
		return fmt.Errorf("warm broker: %w", err)
	}
	defer e.b.stop()
	if err := r.warmAttach(ctx, e); err != nil {
		return fmt.Errorf("warm attach: %w", err)
	}
	if err := r.hop(ctx, e); err != nil {
		return fmt.Errorf("forwarding hop: %w", err)
	}
	e.b.stop()
	if err := r.coldStart(ctx); err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	if err := r.search(ctx); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if err := r.hostedServers(ctx); err != nil {
		return fmt.Errorf("hosted servers: %w", err)
	}
	return nil
}

// binaries are the programs under test.
type binaries struct {
	berth, shim string
	staticShim  string // berth-shim built with CGO_ENABLED=0; "" when not built here
}

// staticSubject names the figures of the berth-shim built without cgo.
const staticSubject = "berth-nocgo"

// binaries: --bin, else a fresh build from the source tree (plus the shim
// built without cgo), else the berth and berth-shim beside this executable.
func (r *runner) binaries(ctx context.Context) (binaries, error) {
	dir, static := r.o.Bin, r.o.staticShim
	if dir == "" && r.src != "" {
		dir = filepath.Join(r.tmp, "bin")
		r.progress("building berth and berth-shim from %s", r.src)
		if err := goBuild(ctx, r.src, dir, nil, "./cmd/berth", "./cmd/berth-shim"); err != nil {
			return binaries{}, err
		}
		var err error
		if static, err = buildStaticShim(ctx, r.src, filepath.Join(r.tmp, "bin-nocgo")); err != nil {
			return binaries{}, err
		}
	}
	if dir == "" {
		exe, err := os.Executable()
		if err != nil {
			return binaries{}, err
		}
		dir = filepath.Dir(exe)
	}
	b := binaries{berth: filepath.Join(dir, "berth"), shim: filepath.Join(dir, "berth-shim"), staticShim: static}
	for _, p := range []string{b.berth, b.shim} {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return b, fmt.Errorf("%s not found: run from the Berth source tree, or pass --bin DIR holding berth and berth-shim", p)
		}
	}
	return b, nil
}

// buildStaticShim builds berth-shim of the module at src without cgo into
// dir and returns its path: a static binary, which starts faster than one
// linked with the C library (the README installs it so).
func buildStaticShim(ctx context.Context, src, dir string) (string, error) {
	if err := goBuild(ctx, src, dir, []string{"CGO_ENABLED=0"}, "./cmd/berth-shim"); err != nil {
		return "", err
	}
	return filepath.Join(dir, "berth-shim"), nil
}

// goBuild builds pkgs of the module at src into dir.
func goBuild(ctx context.Context, src, dir string, env []string, pkgs ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s %s: %w\n%s", strings.Join(env, " "), strings.Join(pkgs, " "), err, out)
	}
	return nil
}

// sourceTree is the module root when the working directory is inside a
// Berth source tree (and Go is installed), else "".
func sourceTree() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return ""
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return ""
	}
	raw, err := os.ReadFile(gomod)
	if err != nil || !strings.HasPrefix(string(raw), "module github.com/berth-dev/berth\n") {
		return ""
	}
	return filepath.Dir(gomod)
}

// machineLine describes the machine: cores, memory, CPU, OS, Go.
func machineLine(ctx context.Context) string {
	model := "unknown CPU"
	if infos, err := cpu.InfoWithContext(ctx); err == nil && len(infos) > 0 {
		model = strings.TrimSpace(infos[0].ModelName)
	}
	memory := "?"
	if vm, err := mem.VirtualMemoryWithContext(ctx); err == nil {
		memory = fmt.Sprintf("%.0f GiB", float64(vm.Total)/(1<<30))
	}
	goVersion := runtime.Version()
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		goVersion = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("machine: %d cores (%s), %s memory, %s/%s, %s", runtime.NumCPU(), model, memory, runtime.GOOS, runtime.GOARCH, goVersion)
}
