package shim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/api"
)

func mkProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".praxis-os"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// The project comes from --project, PROJECT_ROOT, AGENT_OS_BASE_PATH (the
// root or its .praxis-os folder), then the working directory; with none,
// the error says the IDE's roots are the last resort.
func TestFindProjectOrder(t *testing.T) {
	flag, env, base, wd := mkProject(t), mkProject(t), mkProject(t), mkProject(t)
	t.Chdir(filepath.Join(wd, ".praxis-os"))
	for _, tc := range []struct {
		name                    string
		flag, projectRoot, base string
		want                    string
	}{
		{"flag first", flag, env, base, flag},
		{"PROJECT_ROOT next", "", env, base, env},
		{"AGENT_OS_BASE_PATH as the root", "", "", base, base},
		{"AGENT_OS_BASE_PATH as the .praxis-os folder", "", "", filepath.Join(base, ".praxis-os"), base},
		{"a stray AGENT_OS_BASE_PATH is passed over", "", "", t.TempDir(), wd},
		{"the working directory last", "", "", "", wd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PROJECT_ROOT", tc.projectRoot)
			t.Setenv(BasePathEnv, tc.base)
			got, err := FindProject(tc.flag, nil)
			if err != nil || got != (Place{Root: tc.want}) {
				t.Fatalf("FindProject = %+v, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("a flag in no project names a folder", func(t *testing.T) {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := FindProject(dir, nil); err != nil || got != (Place{Root: dir, Folder: true}) {
			t.Fatalf("FindProject(a folder in no project) = %+v, %v", got, err)
		}
	})
	t.Run("a flag in a project names the project", func(t *testing.T) {
		sub := filepath.Join(flag, "src", "deep")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if got, err := FindProject(sub, nil); err != nil || got != (Place{Root: flag}) {
			t.Fatalf("FindProject(a subfolder of a project) = %+v, %v", got, err)
		}
	})
	t.Run("a flag naming the home directory or / is refused", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		for _, dir := range []string{home, "/", filepath.Dir(home)} {
			if _, err := FindProject(dir, nil); !errors.Is(err, api.ErrFolderRefused) || !strings.Contains(err.Error(), "--project DIR") {
				t.Errorf("FindProject(%s) = %v, want ErrFolderRefused naming the fix", dir, err)
			}
		}
	})
	t.Run("a missing flag folder is an error", func(t *testing.T) {
		if _, err := FindProject(filepath.Join(t.TempDir(), "gone"), nil); !errors.Is(err, api.ErrNotProject) {
			t.Fatalf("FindProject(missing) = %v", err)
		}
	})
	t.Run("nothing found", func(t *testing.T) {
		t.Setenv("PROJECT_ROOT", "")
		t.Setenv(BasePathEnv, "")
		t.Chdir(t.TempDir())
		if _, err := FindProject("", nil); !errors.Is(err, errNoProject) {
			t.Fatalf("FindProject with nothing to go on = %v, want errNoProject", err)
		}
	})
}
