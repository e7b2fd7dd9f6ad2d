package workflow

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
)

const maxTargetLen = 4096

const targetRemediation = "pass target_file as a path relative to the project root, such as src/app.go or a feature name, without .. or a leading /"

// cleanTarget checks that target is a relative path inside root without ".."
// and returns it in a normal form (slash separated, cleaned), so that
// "./src/a.go" and "src/a.go" name the same session. An existing path must
// also not lead outside root through a symlink.
func cleanTarget(root, target string) (string, error) {
	bad := func(why string) error {
		return newError(ErrInvalidTarget, targetRemediation, "target_file %q %s", target, why)
	}
	switch {
	case target == "":
		return "", newError(ErrInvalidTarget, targetRemediation, "target_file is empty")
	case len(target) > maxTargetLen:
		return "", newError(ErrInvalidTarget, targetRemediation, "target_file is longer than %d bytes", maxTargetLen)
	case strings.ContainsRune(target, 0):
		return "", bad("contains a NUL byte")
	case filepath.IsAbs(target) || strings.HasPrefix(target, "/") || strings.HasPrefix(target, `\`) || filepath.VolumeName(target) != "" || hasDrive(target):
		return "", bad("must be relative to the project root")
	}
	for _, elem := range strings.FieldsFunc(target, func(r rune) bool { return r == '/' || r == '\\' }) {
		if elem == ".." {
			return "", bad("must not contain ..")
		}
	}
	clean := path.Clean(filepath.ToSlash(target))
	if clean == "." || !filepath.IsLocal(filepath.FromSlash(clean)) {
		return "", bad("does not name a path inside the project")
	}
	if err := insideRoot(root, filepath.Join(root, filepath.FromSlash(clean))); err != nil {
		return "", bad(err.Error())
	}
	return clean, nil
}

// hasDrive reports a Windows drive prefix such as C: on any OS.
func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
}

// insideRoot checks that the deepest existing ancestor of p (p itself when
// it exists) resolves inside root, so that no symlink leads the target out.
func insideRoot(root, p string) error {
	q := p
	for q != root && q != filepath.Dir(q) {
		if _, err := os.Lstat(q); err == nil {
			break
		}
		q = filepath.Dir(q)
	}
	real, err := filepath.EvalSymlinks(q)
	if err != nil {
		return nil // unreadable: the lexical check already holds
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return errors.New("resolves outside the project root through a symlink")
	}
	return nil
}
