package shim

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
			if err != nil || got != tc.want {
				t.Fatalf("FindProject = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	t.Run("a flag that names no project is an error", func(t *testing.T) {
		if _, err := FindProject(t.TempDir(), nil); err == nil || errors.Is(err, errNoProject) {
			t.Fatalf("FindProject(not a project) = %v", err)
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
