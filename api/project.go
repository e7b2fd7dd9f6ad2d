package api

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// ProjectDir is the folder that marks a project root.
const ProjectDir = ".praxis-os"

// ErrNotProject reports a directory without a .praxis-os folder.
var ErrNotProject = errors.New("not a project")

// ResolveRoot makes dir absolute, resolves symlinks and checks that it is a
// directory holding .praxis-os/. Errors name the path and the fix.
func ResolveRoot(dir string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", fmt.Errorf("project root is empty: pass a directory holding %s/", ProjectDir)
	}
	real, err := resolveDir(dir, "project root")
	if err != nil {
		return "", err
	}
	pd, err := os.Stat(filepath.Join(real, ProjectDir))
	if err != nil || !pd.IsDir() {
		return "", fmt.Errorf("%s has no %s/ folder (create it, or pass the project's root): %w", real, ProjectDir, ErrNotProject)
	}
	return real, nil
}

// resolveDir makes dir absolute, resolves symlinks and checks that it is
// a directory; what names it in errors. One that does not exist or is no
// directory is ErrNotProject.
func resolveDir(dir, what string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s %s does not exist: %w", what, abs, ErrNotProject)
		}
		return "", fmt.Errorf("%s %s: %w", what, abs, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, real, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s %s is not a directory: %w", what, real, ErrNotProject)
	}
	return real, nil
}

// ProjectRootOf is the project dir is in: dir itself when it holds
// .praxis-os/, else its nearest ancestor that does (so that --project
// ${workspaceFolder} works on a subfolder of a project). dir must exist.
func ProjectRootOf(dir string) (string, error) {
	root, err := ResolveRoot(dir)
	if err == nil || !errors.Is(err, ErrNotProject) {
		return root, err
	}
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		return "", err
	}
	real, rerr := filepath.EvalSymlinks(abs)
	if rerr != nil {
		return "", err // does not exist: ResolveRoot's error says so
	}
	if root, ferr := FindRoot(real); ferr == nil {
		return root, nil
	}
	return "", fmt.Errorf("%s has no %s/ folder, nor has any folder above it (create it, or pass the project's root): %w", real, ProjectDir, ErrNotProject)
}

// FindRoot returns the nearest ancestor of dir (or dir) that holds .praxis-os/.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ProjectDir)); err == nil && fi.IsDir() {
			return ResolveRoot(d)
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s/ folder in %s or any parent (pass --project DIR or set PROJECT_ROOT): %w", ProjectDir, abs, ErrNotProject)
		}
	}
}

// ProjectID is the stable id of a resolved root: a readable slug of the
// directory name and a hash of the full path, e.g. "shop-3f9a1c2b".
func ProjectID(root string) string {
	sum := sha256.Sum256([]byte(root))
	return slug(filepath.Base(root)) + "-" + hex.EncodeToString(sum[:4])
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		case r == '-' || r == '_' || r == '.':
			b.WriteByte('-')
		}
		if b.Len() >= 24 {
			break
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "project"
	}
	return out
}
