package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A folder is a directory the user works in that is in no project: no
// .praxis-os/ in it or above it. The broker serves it too (the user's
// hosted servers and project information, no standards, no workflows, no
// state file: nothing is written into it), for the windows of a shim.

// Kinds of a mount (Project.Kind).
const (
	KindProject = "project" // a root holding .praxis-os/
	KindFolder  = "folder"  // a folder in no project
)

// ErrFolderRefused reports a directory Berth never serves as a folder:
// the filesystem's root, the home directory and the folders above it.
// Each would hold every project of the user, and its watchers, git reads
// and hosted servers would run over all of them.
var ErrFolderRefused = errors.New("not served as a folder")

// ResolveFolder makes dir absolute, resolves symlinks and checks that it
// is a directory Berth may serve as a folder (not refused, see
// ErrFolderRefused). It does not look for .praxis-os/.
func ResolveFolder(dir string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", fmt.Errorf("folder is empty: pass a directory: %w", ErrNotProject)
	}
	real, err := resolveDir(dir, "folder")
	if err != nil {
		return "", err
	}
	if why := refusedFolder(real); why != "" {
		return "", fmt.Errorf("%s is %s: Berth serves no folder that holds all your work; open a project's folder, or pass --project DIR naming one (create DIR/%s/ to make any folder a project): %w",
			real, why, ProjectDir, ErrFolderRefused)
	}
	return real, nil
}

// refusedFolder says why real (resolved) may not be a folder, or "".
func refusedFolder(real string) string {
	if filepath.Dir(real) == real {
		return "the filesystem's root"
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	if real == home {
		return "your home directory"
	}
	if rel, err := filepath.Rel(real, home); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return "a folder above your home directory"
	}
	return ""
}

// RootOrFolder is where dir is served: the project it is in
// (ProjectRootOf), else, when no folder from dir up holds .praxis-os/,
// dir itself as a folder (ResolveFolder). folder says which.
func RootOrFolder(dir string) (root string, folder bool, err error) {
	root, err = ProjectRootOf(dir)
	if err == nil || !errors.Is(err, ErrNotProject) {
		return root, false, err
	}
	if root, err = ResolveFolder(dir); err != nil {
		return "", false, err
	}
	return root, true, nil
}
