package shim

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/berth-dev/berth/api"
)

// BasePathEnv is praxis-os's variable for the project when the IDE starts
// the server elsewhere. praxis-os's code reads it as the project root (it
// appends .praxis-os); its deployment guide sets it to the .praxis-os
// folder itself. Both are accepted.
const BasePathEnv = "AGENT_OS_BASE_PATH"

// errNoProject reports that no source named a project; the client's
// roots are the last place to look.
var errNoProject = errors.New("no project found")

// FindProject resolves the project root: --project (the folder or its
// nearest ancestor holding .praxis-os/), else $PROJECT_ROOT (the same),
// else $AGENT_OS_BASE_PATH, else the nearest ancestor of the working
// directory holding .praxis-os/. A flag or PROJECT_ROOT that names no
// project is an error; an AGENT_OS_BASE_PATH that does not is logged and
// passed over, as praxis-os does. With none of them, the error wraps
// errNoProject: the IDE's roots may still name the project.
func FindProject(flag string, log *slog.Logger) (string, error) {
	if flag != "" {
		return api.ProjectRootOf(flag)
	}
	if env := os.Getenv("PROJECT_ROOT"); env != "" {
		root, err := api.ProjectRootOf(env)
		if err != nil {
			return "", fmt.Errorf("PROJECT_ROOT: %w", err)
		}
		return root, nil
	}
	if env := os.Getenv(BasePathEnv); env != "" {
		if root, err := basePathRoot(env); err == nil {
			return root, nil
		} else if log != nil {
			log.Warn(BasePathEnv+" names no project; looking further", "value", env, "err", err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := api.FindRoot(wd)
	if errors.Is(err, api.ErrNotProject) {
		return "", fmt.Errorf("%w: no %s/ folder in %s or any parent, and no --project, PROJECT_ROOT or %s", errNoProject, api.ProjectDir, wd, BasePathEnv)
	}
	return root, err
}

// basePathRoot reads AGENT_OS_BASE_PATH: the project root, or its
// .praxis-os folder.
func basePathRoot(v string) (string, error) {
	if filepath.Base(filepath.Clean(v)) == api.ProjectDir {
		if fi, err := os.Stat(v); err == nil && fi.IsDir() {
			return api.ResolveRoot(filepath.Dir(filepath.Clean(v)))
		}
	}
	return api.ResolveRoot(v)
}
