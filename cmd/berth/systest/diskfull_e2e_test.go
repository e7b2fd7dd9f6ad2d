//go:build linux

package systest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/chromedp/chromedp"
)

// TestDiskFullIsShownWhereTheUserLooks runs a broker whose berth.log is
// /dev/full (every write fails with "no space left on device") and whose
// files may not grow past 256 KiB (prlimit --fsize: berth.db cannot take
// a project's index). The broker serves on; the index's error is shown
// wherever the index state is (GET /projects, `berth projects`, `berth
// doctor`, the dashboard's project card), and that the log cannot be
// written is said once where the user looks (/health, doctor, the
// dashboard).
func TestDiskFullIsShownWhereTheUserLooks(t *testing.T) {
	t.Parallel()
	prlimit := needTool(t, "prlimit", "util-linux")
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("no /dev/full on this Linux machine: %v", err)
	}
	ctx := testCtx(t, 3*time.Minute)
	bctx := browser(t, ctx)
	home := brokertest.Home(t)
	logPath := filepath.Join(home, api.LogName)
	if err := os.Symlink("/dev/full", logPath); err != nil {
		t.Fatal(err)
	}
	ctl, _ := brokertest.PortRange(t, 1)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home, Args: []string{"--listen", fmt.Sprintf("127.0.0.1:%d", ctl)},
		Wrap: []string{prlimit, fmt.Sprintf("--fsize=%d", 256<<10), "--"}})
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf(".praxis-os/standards/topic-%03d.md", i)] = fmt.Sprintf("# Topic %d\n\n## Rule\n\n%s\n", i, strings.Repeat(fmt.Sprintf("word%d practice guidance detail ", i), 100))
	}
	root := brokertest.Project(t, "full", files)
	p := b.Attach(t, root)

	var ix *api.IndexState
	brokertest.Eventually(t, "the index is ready with an error", func() bool {
		got, err := b.Client.Project(ctx, p.ID)
		ix = got.Index
		return err == nil && ix != nil && ix.State == "ready" && ix.LastError != ""
	})
	dbPath := filepath.Join(home, api.DBName)
	if !strings.Contains(ix.LastError, "could not write "+dbPath) {
		t.Errorf("GET /projects/{id} index.last_error = %q, want it to name %s", ix.LastError, dbPath)
	}
	ps, err := b.Client.Projects(ctx)
	if err != nil || len(ps) != 1 || ps[0].Index == nil || ps[0].Index.LastError != ix.LastError {
		t.Fatalf("GET /projects: %+v %v, want the index's last_error", ps, err)
	}
	out, _ := berthCmd(t, home, "projects")
	if !strings.Contains(out, "error (below)") || !strings.Contains(out, "full: index error: ") || !strings.Contains(out, "could not write "+dbPath) {
		t.Errorf("berth projects does not show the index error:\n%s", out)
	}

	h, err := b.Client.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{logPath, "cannot be written", "no space left on device", "free space"} {
		if !strings.Contains(h.LogError, want) {
			t.Errorf("/health log_error lacks %q: %q", want, h.LogError)
		}
	}
	doctor, code := berthCmd(t, home, "doctor")
	if code == 0 || strings.Count(doctor, "cannot be written since") != 1 || !strings.Contains(doctor, "project full: search index error: ") || !strings.Contains(doctor, "could not write "+dbPath) {
		t.Errorf("berth doctor (exit %d) does not say once that the log cannot be written, or lacks the index error:\n%s", code, doctor)
	}

	card := fmt.Sprintf(`#projects article[data-id=%q]`, p.ID)
	err = chromedp.Do(bctx,
		chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/", ctl)),
		chromedp.WaitVisible(chromedp.CSS(card)),
		chromedp.WaitVisible(chromedp.CSS(`#problems`)),
	)
	if err != nil {
		t.Fatalf("load the dashboard: %v", err)
	}
	if got := pageText(t, bctx, `#problems`); strings.Count(got, "cannot be written since") != 1 || !strings.Contains(got, logPath) {
		t.Errorf("the dashboard's broker section does not say once that the log cannot be written:\n%s", got)
	}
	// The page draws the cards again as each state of the broker arrives,
	// and a card read while it is replaced reads empty: read until the
	// card holds the error.
	var got string
	if !brokertest.Poll(brokertest.WaitLimit, func() bool {
		got = pageText(t, bctx, chromedp.CSS(card))
		return strings.Contains(got, "could not write "+dbPath)
	}) {
		t.Errorf("the project's card does not show the index error:\n%s", got)
	}
}
