package links

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadFile reads real, a path [Policy.Resolve] returned, without leaving
// the folder that admitted it (the root or an allowed directory): a link
// put into the path since Resolve that leads out of that folder is refused
// (os.Root walks the path one component at a time).
func (p *Policy) ReadFile(real string) ([]byte, error) {
	root, rel, err := p.openAt(real)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(rel)
}

// Stat is os.Stat of real under the same guard as ReadFile.
func (p *Policy) Stat(real string) (fs.FileInfo, error) {
	root, rel, err := p.openAt(real)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Stat(rel)
}

// openAt opens the folder admitting real and returns real relative to it.
func (p *Policy) openAt(real string) (*os.Root, string, error) {
	dir := ""
	for _, d := range append([]string{p.root}, p.allow...) {
		if Within(d, real) && len(d) > len(dir) {
			dir = d
		}
	}
	if dir == "" {
		return nil, "", &OutsideError{Path: real, Target: real}
	}
	rel, err := filepath.Rel(dir, real)
	if err != nil {
		return nil, "", fmt.Errorf("links: %s in %s: %w", real, dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return root, rel, nil
}
