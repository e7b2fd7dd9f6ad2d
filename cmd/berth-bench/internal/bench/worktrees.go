package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
)

// The worktrees figures: git worktrees of one repository share one search
// content index. Each is a ratio against one worktree measured in the
// same run on a broker of its own.
const (
	worktreesBench = "worktrees"
	// switchMarker is a word only the switched-to branch's files hold.
	switchMarker = "switchmarker"
)

// git runs git in dir with no user or system config.
func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// worktreeRepo makes a repository of n standards files on main, a branch
// "switch" where every file differs (other text, and each holds
// switchMarker), and a branch "edit" where each file of main has
// switchMarker added to its last section.
func (r *runner) worktreeRepo(ctx context.Context, n int) (string, error) {
	root, err := makeProject(r.tmp, "wt-repo", n, 11)
	if err != nil {
		return "", err
	}
	steps := [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "first"}, {"checkout", "-q", "-b", "switch"}}
	for _, s := range steps {
		if err := git(ctx, root, s...); err != nil {
			return "", err
		}
	}
	if err := writeStandards(root, n, 12); err != nil {
		return "", err
	}
	if err := appendMarker(root); err != nil {
		return "", err
	}
	for _, s := range [][]string{{"commit", "-q", "-am", "switch"}, {"checkout", "-q", "main"}, {"checkout", "-q", "-b", "edit"}} {
		if err := git(ctx, root, s...); err != nil {
			return "", err
		}
	}
	// "edit": main's files, each with the marker added to its last
	// section, the others unchanged, as a branch that edits many files
	// does.
	if err := appendMarker(root); err != nil {
		return "", err
	}
	for _, s := range [][]string{{"commit", "-q", "-am", "edit"}, {"checkout", "-q", "main"}} {
		if err := git(ctx, root, s...); err != nil {
			return "", err
		}
	}
	return root, nil
}

// appendMarker adds switchMarker to every standards file under root.
func appendMarker(root string) error {
	return filepath.WalkDir(filepath.Join(root, ".praxis-os", "standards"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString("\n" + switchMarker + "\n")
		return errors.Join(err, f.Close())
	})
}

// firstAnswer attaches root and times attach to the first search answer,
// as a client sees it: the attach, the MCP session's initialize and a
// search, which waits for the index's first build (search_standards
// answers once the build is over). Nothing polls the control API
// meanwhile: a poll every 50 ms added up to 50 ms to each figure and its
// own CPU time to the broker's, most of a sibling's attach.
func firstAnswer(ctx context.Context, b *broker, hc *http.Client, root string) (time.Duration, *httpSession, error) {
	start := time.Now()
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		return 0, nil, fmt.Errorf("mount %s: %w", root, err)
	}
	s, err := openHTTPSession(ctx, hc, resp.URL)
	if err != nil {
		return 0, nil, err
	}
	got, err := s.searchTotal(ctx, "standard")
	if err != nil {
		return 0, nil, err
	}
	took := time.Since(start)
	if got == 0 {
		return 0, nil, fmt.Errorf("the first search in %s found nothing: the answer did not wait for the index", root)
	}
	return took, s, nil
}

// worktrees measures: one worktree indexed alone (its build, attach to
// first answer, RSS growth); then, on another broker, k worktrees attached
// one after another (total build, RSS growth), a branch switch of every
// file in one of them (time until a search sees all of the new branch),
// and a new worktree equal to a sibling (attach to first answer).
func (r *runner) worktrees(ctx context.Context) error {
	n, k := r.o.WorktreeFiles, r.o.Worktrees
	r.progress("worktrees: a repository of %d files, %d worktrees", n, k)
	repo, err := r.worktreeRepo(ctx, n)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 5 * time.Minute}
	defer hc.CloseIdleConnections()

	// One worktree alone.
	one, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, "worktrees-one-home"), 4)
	if err != nil {
		return err
	}
	defer one.stop()
	u0, err := quietUsage(ctx, one)
	if err != nil {
		return err
	}
	build, _, err := firstAnswer(ctx, one, hc, repo)
	if err != nil {
		return err
	}
	u1, err := quietUsage(ctx, one)
	if err != nil {
		return err
	}
	if r.o.Profile != "" {
		if err := heapProfile(ctx, one, r.o.Profile, "worktrees-one"); err != nil {
			return err
		}
	}
	one.stop()
	r.rs.add(worktreesBench, "one", "build", ms(build), "ms", n)
	r.rs.add(worktreesBench, "one", "rss-growth", u1.rss-u0.rss, "MiB", n)
	buildCPU := u1.cpu - u0.cpu
	r.rs.add(worktreesBench, "one", "build-cpu", buildCPU, "ms", n)

	// k worktrees, one after another.
	roots := []string{repo}
	for i := 1; i <= k; i++ { // the last one is added later, equal to a sibling
		wt := filepath.Join(r.tmp, fmt.Sprintf("wt-%d", i))
		if err := git(ctx, repo, "worktree", "add", "-q", "-b", fmt.Sprintf("wt-%d", i), wt); err != nil {
			return err
		}
		roots = append(roots, wt)
	}
	many, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, "worktrees-many-home"), k+4)
	if err != nil {
		return err
	}
	defer many.stop()
	if u0, err = quietUsage(ctx, many); err != nil {
		return err
	}
	var total time.Duration
	var sessions []*httpSession
	var profiled <-chan error
	for i, root := range roots[:k] {
		if i == 1 {
			profiled = r.profileWorktrees(ctx, many, "worktrees-siblings", 10)
		}
		cpu0, err := cpuMs(ctx, many.pid())
		if err != nil {
			return err
		}
		d, s, err := firstAnswer(ctx, many, hc, root)
		if err != nil {
			return err
		}
		cpu1, err := cpuMs(ctx, many.pid())
		if err != nil {
			return err
		}
		r.progress("worktrees: worktree %d of %d indexed in %.0f ms, %.0f ms of the broker's CPU", i+1, k, ms(d), cpu1-cpu0)
		total += d
		sessions = append(sessions, s)
	}
	if err := <-profiled; err != nil {
		return err
	}
	if u1, err = quietUsage(ctx, many); err != nil {
		return err
	}
	r.rs.add(worktreesBench, "many", "build", ms(total), "ms", k)
	r.rs.add(worktreesBench, "many", "rss-growth", u1.rss-u0.rss, "MiB", k)
	r.rs.add(worktreesBench, "many", "build-ratio", ms(total)/ms(build), "x", k)
	r.rs.add(worktreesBench, "many", "rss-ratio", ratio(u1.rss-u0.rss, r.rsValue("one", "rss-growth")), "x", k)
	r.rs.add(worktreesBench, "many", "build-cpu", u1.cpu-u0.cpu, "ms", k)
	r.rs.add(worktreesBench, "many", "build-cpu-ratio", ratio(u1.cpu-u0.cpu, buildCPU), "x", k)

	// A branch switch of every file in the last of them, to content no
	// worktree holds, then back to its branch, whose content its siblings
	// hold; then to a branch that edits the last section of every file
	// (the others as its siblings hold them), and back.
	switched := sessions[len(sessions)-1]
	perPoll, err := pollCPU(ctx, many, switched)
	if err != nil {
		return err
	}
	r.rs.add(worktreesBench, "many", "poll-cpu", perPoll, "ms", pollCalibration)
	profiled = r.profileWorktrees(ctx, many, "worktrees-switch", 8)
	sw, gitTook, cpu, err := switchTo(ctx, many, switched, roots[k-1], "switch", n, perPoll)
	if err != nil {
		return err
	}
	if err := <-profiled; err != nil {
		return err
	}
	own := fmt.Sprintf("wt-%d", k-1)
	r.switchRows("switch", sw, gitTook, cpu, build, buildCPU, n)
	for _, step := range []struct {
		metric, branch string
		want           int
	}{{"switch-back", own, 0}, {"edit", "edit", n}, {"edit-back", own, 0}} {
		if sw, gitTook, cpu, err = switchTo(ctx, many, switched, roots[k-1], step.branch, step.want, perPoll); err != nil {
			return err
		}
		r.switchRows(step.metric, sw, gitTook, cpu, build, buildCPU, n)
	}

	// A new worktree equal to a sibling.
	if u0, err = quietUsage(ctx, many); err != nil {
		return err
	}
	d, s, err := firstAnswer(ctx, many, hc, roots[k])
	if err != nil {
		return err
	}
	if u1, err = quietUsage(ctx, many); err != nil {
		return err
	}
	r.rs.add(worktreesBench, "many", "twin-cpu-ratio", ratio(u1.cpu-u0.cpu, buildCPU), "x", n)
	sessions = append(sessions, s)
	r.rs.add(worktreesBench, "many", "twin-attach", ms(d), "ms", n)
	r.rs.add(worktreesBench, "many", "twin-ratio", ms(d)/ms(build), "x", n)
	for _, s := range sessions {
		s.close(context.WithoutCancel(ctx))
	}
	return nil
}

// switchRows records a switch's figures under metric (its time from the
// start of git's checkout, and after it returned, each against one
// worktree's build; git's own time; the broker's CPU time against the
// build's).
func (r *runner) switchRows(metric string, sw, gitTook time.Duration, cpu float64, build time.Duration, buildCPU float64, n int) {
	r.rs.add(worktreesBench, "many", metric, ms(sw), "ms", n)
	r.rs.add(worktreesBench, "many", metric+"-ratio", ms(sw)/ms(build), "x", n)
	r.rs.add(worktreesBench, "many", metric+"-git", ms(gitTook), "ms", n)
	r.rs.add(worktreesBench, "many", metric+"-after-git", ms(sw-gitTook), "ms", n)
	r.rs.add(worktreesBench, "many", metric+"-after-git-ratio", ms(sw-gitTook)/ms(build), "x", n)
	r.rs.add(worktreesBench, "many", metric+"-cpu-ratio", ratio(cpu, buildCPU), "x", n)
}

// profileWorktrees, with --profile, takes a CPU profile of b for the
// next seconds (name-cpu.pprof) and then a heap profile (name-heap.pprof)
// in the background; the channel gives its error once both are written
// (at once without --profile). Figures of a profiled run are not for
// comparison: the profiler takes CPU of its own.
func (r *runner) profileWorktrees(ctx context.Context, b *broker, name string, seconds int) <-chan error {
	done := make(chan error, 1)
	if r.o.Profile == "" {
		done <- nil
		return done
	}
	go func() {
		err := os.MkdirAll(r.o.Profile, 0o755)
		if err == nil {
			err = b.profile(ctx, fmt.Sprintf("profile?seconds=%d", seconds), filepath.Join(r.o.Profile, name+"-cpu.pprof"))
		}
		if err == nil {
			err = heapProfile(ctx, b, r.o.Profile, name)
		}
		if err != nil {
			err = fmt.Errorf("profile the broker: %w", err)
		}
		done <- err
	}()
	return done
}

// heapProfile writes b's heap profile as name-heap.pprof in dir.
func heapProfile(ctx context.Context, b *broker, dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return b.profile(ctx, "heap", filepath.Join(dir, name+"-heap.pprof"))
}

// brokerUsage is a broker's resident set size (MiB) and the CPU time it
// has used so far (ms).
type brokerUsage struct{ rss, cpu float64 }

// memorySettle is how long a broker is left alone before its RSS is
// read: longer than the least gap between two of its memory trims (1 s),
// so that the trim after the last mount's build has run whether or not
// an earlier one ran just before it, as after a single mount.
const memorySettle = 1500 * time.Millisecond

// quietUsage reads b's usage once it has been left alone memorySettle.
func quietUsage(ctx context.Context, b *broker) (brokerUsage, error) {
	time.Sleep(memorySettle)
	rss, err := rssMiB(ctx, b.pid())
	if err != nil {
		return brokerUsage{}, err
	}
	cpu, err := cpuMs(ctx, b.pid())
	return brokerUsage{rss: rss, cpu: cpu}, err
}

// pollCalibration is how many searches pollCPU times.
const pollCalibration = 200

// pollCPU is the broker's CPU time (ms) for one search of switchMarker in
// s, the search a switch is polled with, averaged over pollCalibration.
func pollCPU(ctx context.Context, b *broker, s *httpSession) (float64, error) {
	cpu0, err := cpuMs(ctx, b.pid())
	if err != nil {
		return 0, err
	}
	for range pollCalibration {
		if _, err := s.searchTotal(ctx, switchMarker); err != nil {
			return 0, err
		}
	}
	cpu1, err := cpuMs(ctx, b.pid())
	return (cpu1 - cpu0) / pollCalibration, err
}

// switchTo checks branch out in root and times it until a search in s
// finds want sections holding switchMarker; gitTook is how long git's
// checkout itself took (writing the files), part of the whole, and cpu
// the CPU time b used meanwhile (ms), less that of the searches polled
// every 10 ms (perPoll each).
func switchTo(ctx context.Context, b *broker, s *httpSession, root, branch string, want int, perPoll float64) (took, gitTook time.Duration, cpu float64, err error) {
	cpu0, err := cpuMs(ctx, b.pid())
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	if err := git(ctx, root, "checkout", "-q", branch); err != nil {
		return 0, 0, 0, err
	}
	gitTook = time.Since(start)
	for polls := 1; ; polls++ {
		got, err := s.searchTotal(ctx, switchMarker)
		if err != nil {
			return 0, 0, 0, err
		}
		if got == want {
			took = max(time.Since(start), gitTook)
			cpu1, err := cpuMs(ctx, b.pid())
			return took, gitTook, max(0, cpu1-cpu0-float64(polls)*perPoll), err
		}
		if time.Since(start) > 5*time.Minute {
			return 0, 0, 0, fmt.Errorf("the checkout of %s was not in the index within 5m (%d sections hold the marker, want %d)", branch, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ratio is a/b, 0 when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// rsValue is a worktrees figure already recorded.
func (r *runner) rsValue(subject, metric string) float64 {
	res, _ := r.rs.get(worktreesBench, subject, metric)
	return res.Value
}

// searchTotal runs search_standards for q and returns how many sections matched.
func (s *httpSession) searchTotal(ctx context.Context, q string) (int, error) {
	s.nextID++
	rep, err := s.post(ctx, toolCallWith(s.nextID, "search_standards", fmt.Sprintf(`{"query":%q,"n_results":1}`, q)), true)
	if err != nil {
		return 0, err
	}
	if err := rep.check(); err != nil {
		return 0, err
	}
	return rep.Result.StructuredContent.Total, nil
}

// worktreesRows are the table's lines of the worktrees mode.
func worktreesRows() []row {
	ratioRow := func(label, metric, target string, limit float64) row {
		return row{label: label, bench: worktreesBench, metric: metric, berthSubject: "many", target: target,
			met: func(rs *results) (bool, bool) {
				v, ok := rs.get(worktreesBench, "many", metric)
				return ok && v.Value <= limit, ok
			}}
	}
	return []row{
		{label: "one worktree: index build (attach to first search answer)", bench: worktreesBench, metric: "build", berthSubject: "one"},
		{label: "one worktree: broker RSS growth", bench: worktreesBench, metric: "rss-growth", berthSubject: "one"},
		{label: "one worktree: the broker's CPU time for it (settled before and after)", bench: worktreesBench, metric: "build-cpu", berthSubject: "one"},
		{label: "worktrees attached one after another: total index time", bench: worktreesBench, metric: "build", berthSubject: "many"},
		{label: "worktrees attached one after another: broker RSS growth", bench: worktreesBench, metric: "rss-growth", berthSubject: "many"},
		ratioRow("total index time / one worktree's", "build-ratio", "<= 1.25x", 1.25),
		ratioRow("RSS growth / one worktree's", "rss-ratio", "<= 1.25x", 1.25),
		{label: "worktrees attached one after another: the broker's CPU time", bench: worktreesBench, metric: "build-cpu", berthSubject: "many"},
		{label: "that CPU time / one worktree's", bench: worktreesBench, metric: "build-cpu-ratio", berthSubject: "many"},
		{label: "branch switch of every file to content no worktree holds: time until a search sees it all", bench: worktreesBench, metric: "switch", berthSubject: "many"},
		{label: "that switch from its start / one worktree's build", bench: worktreesBench, metric: "switch-ratio", berthSubject: "many"},
		{label: "of which git's checkout itself (writing the files)", bench: worktreesBench, metric: "switch-git", berthSubject: "many"},
		{label: "that switch after git's checkout returned: until a search sees it all", bench: worktreesBench, metric: "switch-after-git", berthSubject: "many"},
		ratioRow("that switch after git's checkout returned / one worktree's build", "switch-after-git-ratio", "<= 0.25x", 0.25),
		{label: "the broker's CPU time for one search of the marker (what a switch is polled with)", bench: worktreesBench, metric: "poll-cpu", berthSubject: "many"},
		{label: "the broker's CPU time for that switch, less the polls' / for one worktree's build", bench: worktreesBench, metric: "switch-cpu-ratio", berthSubject: "many"},
		{label: "branch switch of every file back to content the siblings hold", bench: worktreesBench, metric: "switch-back", berthSubject: "many"},
		{label: "that switch back from its start / one worktree's build", bench: worktreesBench, metric: "switch-back-ratio", berthSubject: "many"},
		{label: "of which git's checkout itself", bench: worktreesBench, metric: "switch-back-git", berthSubject: "many"},
		{label: "that switch back after git's checkout returned: until a search sees it all", bench: worktreesBench, metric: "switch-back-after-git", berthSubject: "many"},
		ratioRow("that switch back after git's checkout returned / one worktree's build", "switch-back-after-git-ratio", "<= 0.25x", 0.25),
		{label: "the broker's CPU time for that switch back, less the polls' / for one worktree's build", bench: worktreesBench, metric: "switch-back-cpu-ratio", berthSubject: "many"},
		{label: "branch switch that edits every file's last section (its other sections unchanged): time until a search sees it all", bench: worktreesBench, metric: "edit", berthSubject: "many"},
		{label: "of which git's checkout itself", bench: worktreesBench, metric: "edit-git", berthSubject: "many"},
		{label: "that edit after git's checkout returned: until a search sees it all", bench: worktreesBench, metric: "edit-after-git", berthSubject: "many"},
		ratioRow("that edit after git's checkout returned / one worktree's build", "edit-after-git-ratio", "<= 0.25x", 0.25),
		{label: "the broker's CPU time for that edit, less the polls' / for one worktree's build", bench: worktreesBench, metric: "edit-cpu-ratio", berthSubject: "many"},
		{label: "and back: after git's checkout returned / one worktree's build", bench: worktreesBench, metric: "edit-back-after-git-ratio", berthSubject: "many"},
		{label: "new worktree equal to a sibling: attach to first search answer", bench: worktreesBench, metric: "twin-attach", berthSubject: "many"},
		ratioRow("new equal worktree / one worktree's build", "twin-ratio", "<= 0.25x", 0.25),
		{label: "the broker's CPU time for the new equal worktree / for one worktree's build", bench: worktreesBench, metric: "twin-cpu-ratio", berthSubject: "many"},
	}
}
