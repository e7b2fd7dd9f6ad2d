package search

import (
	"io/fs"
	"os"
	"path"
	"sync"
)

// dirRoots reads many files of one project with few system calls: each
// folder is opened once (an [os.Root] below the project's), and a file is
// then one stat and one open relative to its folder, where resolving its
// path through the link policy stats every component of it and opens the
// project root anew for each read. Only what stays inside the project root
// is read this way: os.Root refuses a link leading out of it, and the caller
// then takes the policy's path, which admits or reports it. It is safe for
// concurrent use; Close closes every folder.
type dirRoots struct {
	root *os.Root // nil when the project root cannot be opened

	mu   sync.Mutex
	dirs map[string]*os.Root // folder (relative, slash-separated) -> its root, nil when it cannot be opened
}

// openDirRoots opens the project root dir; a root that cannot be opened
// leaves every read to the policy's path.
func openDirRoots(dir string) *dirRoots {
	root, err := os.OpenRoot(dir)
	if err != nil {
		root = nil
	}
	return &dirRoots{root: root, dirs: map[string]*os.Root{}}
}

// folder returns the opened folder dir, nil when it cannot be opened inside
// the project root.
func (d *dirRoots) folder(dir string) *os.Root {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.dirs[dir]
	if !ok {
		if dir == "." {
			r, _ = d.root.OpenRoot(".")
		} else {
			r, _ = d.root.OpenRoot(dir)
		}
		d.dirs[dir] = r
	}
	return r
}

// regular returns rel's file info and a reader of its bytes when rel is a
// regular file (not a link) inside the project root; false leaves rel to
// the policy's path: a link, a missing file, anything not regular.
func (d *dirRoots) regular(rel string) (fs.FileInfo, func() ([]byte, error), bool) {
	if d == nil || d.root == nil {
		return nil, nil, false
	}
	dir, name := path.Split(rel)
	if dir == "" {
		dir = "."
	} else {
		dir = dir[:len(dir)-1]
	}
	r := d.folder(dir)
	if r == nil {
		return nil, nil, false
	}
	fi, err := r.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, false
	}
	return fi, func() ([]byte, error) { return r.ReadFile(name) }, true
}

// Close closes the folders and the root.
func (d *dirRoots) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.dirs {
		if r != nil {
			r.Close()
		}
	}
	clear(d.dirs)
	if d.root != nil {
		d.root.Close()
	}
}
