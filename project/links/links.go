// Package links decides which symlinks a project's indexing may follow:
// one whose target lies inside the project root, or inside a directory the
// project's or the broker's configuration allows (rag.allow_outside).
// Anything else is not read, so a link in a project (a cloned repository,
// a folder another account prepared) cannot turn the project's search into
// a way to read the owner's other files.
package links

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Policy is the set of places a project's links may lead to. Its zero
// value is not usable; build it with [New]. It is immutable.
type Policy struct {
	root  string
	allow []string
}

// New returns the policy of the project at root (absolute) that also
// admits targets inside the directories allow (absolute). Both are
// resolved through their own symlinks when they exist.
func New(root string, allow []string) *Policy {
	p := &Policy{root: resolve(root)}
	for _, a := range allow {
		r := resolve(a)
		if r != p.root && !slices.Contains(p.allow, r) {
			p.allow = append(p.allow, r)
		}
	}
	return p
}

func resolve(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// Allowed returns the directories outside the root that links may lead to.
func (p *Policy) Allowed() []string { return slices.Clone(p.allow) }

// Resolve follows every symlink on the way to abs and returns the real
// path, if it lies inside the root or an allowed directory. Otherwise the
// error is an [*OutsideError]. Other errors are those of
// filepath.EvalSymlinks: a missing file, a dangling link, a loop.
func (p *Policy) Resolve(abs string) (string, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	if !p.Admits(real) {
		return "", &OutsideError{Path: abs, Target: real}
	}
	return real, nil
}

// Admits reports whether real, a path with no symlinks left, lies inside
// the root or an allowed directory.
func (p *Policy) Admits(real string) bool {
	if Within(p.root, real) {
		return true
	}
	for _, a := range p.allow {
		if Within(a, real) {
			return true
		}
	}
	return false
}

// Within reports whether path is dir or lies below it (both clean and
// absolute).
func Within(dir, path string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// OutsideError names a path whose symlinks lead out of the places a
// project may read.
type OutsideError struct {
	Path   string // as asked for
	Target string // where its links lead
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s is a link to %s, outside the project: not followed (to index it, add its folder to rag.allow_outside)", e.Path, e.Target)
}
