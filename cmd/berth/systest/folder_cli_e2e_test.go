package systest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/google/go-cmp/cmp"
)

// TestCLIServesFolder: `berth call`, `berth tools` and `berth search` with
// --project naming a folder in no project serve it as a window's shim
// does, and write nothing into it; the home directory is refused with the
// fix, and nothing is mounted for it.
func TestCLIServesFolder(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	userHome, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(userHome, "notes")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, folder)
	env := []string{"HOME=" + userHome}

	out, err := berthEnv(t, b.Home, env, "call", "--project", folder, "get_server_info")
	if err != nil || !strings.Contains(out, `"kind": "folder"`) || !strings.Contains(out, folder) {
		t.Errorf("berth call --project FOLDER get_server_info: %v\n%s", err, out)
	}
	out, err = berthEnv(t, b.Home, env, "tools", "--project", folder)
	if err != nil || !strings.Contains(out, "get_server_info") || !strings.Contains(out, "current_date") {
		t.Errorf("berth tools --project FOLDER: %v\n%s", err, out)
	}
	out, err = berthEnv(t, b.Home, env, "search", "--project", folder, "how do we test")
	if !strings.Contains(out, folder+" has no .praxis-os/ folder") {
		t.Errorf("berth search --project FOLDER does not say how to start using .praxis-os/: %v\n%s", err, out)
	}
	if diff := cmp.Diff(before, tree(t, folder)); diff != "" {
		t.Errorf("the folder changed while served (-before +after):\n%s", diff)
	}

	for _, args := range [][]string{{"call", "--project", userHome, "get_server_info"}, {"tools", "--project", userHome}, {"search", "--project", userHome, "x"}} {
		out, err := berthEnv(t, b.Home, env, args...)
		if err == nil || !strings.Contains(out, userHome+" is your home directory") || !strings.Contains(out, "--project DIR") {
			t.Errorf("berth %s: %v; want the home directory refused with the fix:\n%s", strings.Join(args, " "), err, out)
		}
	}
	brokertest.Eventually(t, "the CLI's holds of the folder ended and nothing holds the home directory", func() bool {
		ps, err := b.Client.Projects(ctx)
		if err != nil {
			return false
		}
		for _, p := range ps {
			if p.Root == userHome || (p.Root == folder && p.Holders != 0) {
				return false
			}
		}
		return true
	})
	if _, err := b.Client.Project(ctx, api.ProjectID(userHome)); err == nil {
		t.Errorf("the home directory is mounted")
	}
}

// TestDoctorKnowsFolderRecords: with no broker running, `berth doctor`
// calls a folder the broker served a folder, and only a root that no
// longer exists gone.
func TestDoctorKnowsFolderRecords(t *testing.T) {
	t.Parallel()
	home := brokertest.Home(t)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home})
	folder, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, code := berthCmd(t, home, "call", "--project", folder, "get_server_info"); code != 0 {
		t.Fatalf("berth call --project FOLDER (exit %d):\n%s", code, out)
	}
	gone := brokertest.Project(t, "gone", nil)
	if out, code := berthCmd(t, home, "attach", gone); code != 0 {
		t.Fatalf("attach: %s", out)
	}
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	out, _ := doctorLines(t, home)
	mustContain(t, out, "(2 projects known)", "note  folder ", folder+" is in no project (no .praxis-os/)", "note  project gone: "+gone+" is gone")
	if strings.Contains(out, folder+" is gone") {
		t.Errorf("doctor calls the folder gone:\n%s", out)
	}
}
