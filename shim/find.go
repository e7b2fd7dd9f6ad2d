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
// roots, then the working directory as a folder, are the last places to
// look.
var errNoProject = errors.New("no project found")

// Place is where a shim serves: a project's root, or a folder in no
// project (no .praxis-os/ in it or above it), which the broker serves
// with the user's hosted servers and no standards (api.KindFolder).
type Place struct {
	Root   string
	Folder bool
}

// FindProject resolves where the shim serves: --project (the project the
// folder is in, else the folder itself), else $PROJECT_ROOT (the same),
// else $AGENT_OS_BASE_PATH, else the nearest ancestor of the working
// directory holding .praxis-os/. A flag or PROJECT_ROOT that does not
// exist, or that names a folder Berth does not serve (the home directory,
// /: api.ResolveFolder), is an error; an AGENT_OS_BASE_PATH that names no
// project is logged and passed over, as praxis-os does. With none of
// them, the error wraps errNoProject: the IDE's roots may still name the
// project, else the working directory is served as a folder
// (WorkingFolder).
func FindProject(flag string, log *slog.Logger) (Place, error) {
	if flag != "" {
		return placeOf(flag)
	}
	if env := os.Getenv("PROJECT_ROOT"); env != "" {
		p, err := placeOf(env)
		if err != nil {
			return Place{}, fmt.Errorf("PROJECT_ROOT: %w", err)
		}
		return p, nil
	}
	if env := os.Getenv(BasePathEnv); env != "" {
		if root, err := basePathRoot(env); err == nil {
			return Place{Root: root}, nil
		} else if log != nil {
			log.Warn(BasePathEnv+" names no project; looking further", "value", env, "err", err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return Place{}, err
	}
	root, err := api.FindRoot(wd)
	if errors.Is(err, api.ErrNotProject) {
		return Place{}, fmt.Errorf("%w: no %s/ folder in %s or any parent, and no --project, PROJECT_ROOT or %s", errNoProject, api.ProjectDir, wd, BasePathEnv)
	}
	return Place{Root: root}, err
}

// placeOf is the project dir is in, else dir as a folder.
func placeOf(dir string) (Place, error) {
	root, folder, err := api.RootOrFolder(dir)
	return Place{Root: root, Folder: folder}, err
}

// WorkingFolder is the working directory as a folder, when nothing else
// named where to serve (why says so): an error, with why and the fix,
// when it is a folder Berth does not serve (the home directory, /).
func WorkingFolder(why error) (Place, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Place{}, fmt.Errorf("%w; and the working directory: %v", why, err)
	}
	root, err := api.ResolveFolder(wd)
	if err != nil {
		return Place{}, fmt.Errorf("%w; nor can the working directory be served as a folder: %v", why, err)
	}
	return Place{Root: root, Folder: true}, nil
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
