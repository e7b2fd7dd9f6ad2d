package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// owner is the state of the goroutine that owns the fsnotify watcher: the
// watch list, the pending changes and the debounce timer. Nothing else
// touches them.
type owner struct {
	w *Watcher
	// watched maps an absolute folder to true when it lies inside a target
	// (watched for its content) or false when it is only a parent of a
	// missing target (watched for that target's creation).
	watched map[string]bool
	pending map[string]struct{}
	first   time.Time // when the oldest pending change arrived
	timer   *time.Timer
	started bool // set after the initial watches: new folders' files are then reported
	linked  linkWatch
}

func newOwner(w *Watcher) *owner {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &owner{w: w, watched: map[string]bool{}, pending: map[string]struct{}{}, timer: t, linked: newLinkWatch()}
}

func (o *owner) run() {
	defer close(o.w.done)
	defer o.timer.Stop()
	o.started = true
	events, errs := o.w.events, o.w.errs
	for {
		select {
		case <-o.w.stop:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			o.handle(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			o.handleErr(err)
		case <-o.timer.C:
			o.flush()
		}
	}
}

// handle takes one fsnotify event.
func (o *owner) handle(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod || ev.Op == 0 {
		return // attribute changes do not change content
	}
	o.linkTargetChanged(ev.Name)
	rel, ok := o.rel(ev.Name)
	if !ok {
		return
	}
	tgt := o.targetOf(rel)
	if tgt == "" {
		// A parent of a target: only the target's own path matters.
		if o.aboveTarget(rel) {
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				o.forget(ev.Name)
				o.mark(rel)
			}
			o.ensure()
		}
		return
	}
	if hiddenBelow(tgt, rel) {
		return
	}
	if ev.Has(fsnotify.Create) {
		fi, err := os.Lstat(ev.Name)
		switch {
		case err != nil:
		case rel == tgt && fi.Mode()&fs.ModeSymlink != 0:
			o.forget(ev.Name) // a watched folder's link replaced in place
			o.ensure()
		case fi.IsDir():
			o.watchTree(ev.Name, tgt)
		case fi.Mode()&fs.ModeSymlink != 0:
			o.follow(ev.Name, rel)
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		o.forget(ev.Name)
		o.unfollow(rel)
		if rel == tgt {
			o.ensure()
		}
	}
	o.mark(rel)
}

func (o *owner) handleErr(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		o.w.log.Warn("watch: event queue overflowed; rescanning the watched folders")
		for _, t := range o.w.targets {
			o.mark(t)
		}
		o.ensure()
		return
	}
	o.w.log.Warn("watch: file watcher error", "err", err)
}

// mark records a changed path and arms the debounce timer; Burst paths
// are published at once.
func (o *owner) mark(rel string) {
	now := time.Now()
	if len(o.pending) == 0 {
		o.first = now
	}
	o.pending[rel] = struct{}{}
	if len(o.pending) >= Burst {
		o.timer.Stop()
		o.flush()
		return
	}
	wait := min(Quiet, o.first.Add(MaxDelay).Sub(now))
	o.timer.Reset(max(wait, 0))
}

// flush publishes the pending changes as one batch.
func (o *owner) flush() {
	if len(o.pending) == 0 {
		return
	}
	batch := make([]string, 0, len(o.pending))
	for p := range o.pending {
		batch = append(batch, p)
	}
	clear(o.pending)
	o.w.publish(batch)
}

// ensure watches every target that exists and, for each that does not, its
// nearest existing parent inside the root.
func (o *owner) ensure() {
	for _, t := range o.w.targets {
		abs := o.abs(t)
		// A folder whose links lead where the policy does not allow is not
		// watched; its parent is, to see the link change.
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() && o.admitTop(abs) {
			if !o.watched[abs] {
				o.watchTree(abs, t)
				if o.started {
					o.mark(t)
				}
			}
			continue
		}
		for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				if _, ok := o.watched[dir]; !ok {
					if err := o.w.fs.Add(dir); err != nil {
						o.w.log.Warn("watch: cannot watch folder", "path", dir, "err", err)
					} else {
						o.watched[dir] = false
					}
				}
				break
			}
			if dir == o.w.root || len(dir) <= len(o.w.root) {
				break
			}
		}
	}
}

// watchTree watches dir and the folders below it (skipping hidden ones)
// inside target tgt. Once started, the files found are reported as changed:
// they may have been written before the watch was in place.
func (o *owner) watchTree(dir, tgt string) {
	rel, ok := o.rel(dir)
	if dir == o.w.root {
		rel, ok = "", true // the root itself is a target (a source "."): its files' paths are their names
	}
	if !ok || hiddenBelow(tgt, rel) {
		return
	}
	// dir is entered when it is a link (an admitted source folder); links
	// below it are not entered.
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return
	}
	o.watchFolder(dir, rel)
}

// watchFolder watches folder p (rel relative to the root, not hidden below
// its target), then walks what it holds: each folder's watch is in place
// before the folder is read, so a file added after the read is reported.
// A path is its folder's, a separator and its name (no cleaning, no
// sorting); before the start a regular file asks for nothing.
func (o *owner) watchFolder(p, rel string) {
	if !o.watched[p] {
		if err := o.w.fs.Add(p); err != nil {
			o.w.log.Warn("watch: cannot watch folder", "path", p, "err", err)
		} else {
			o.watched[p] = true
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return
	}
	for _, d := range entries {
		name := d.Name()
		if name == "" || name[0] == '.' {
			continue // hidden: .git, .cache, editor temp files
		}
		if !o.started && d.Type().IsRegular() {
			continue
		}
		child, crel := p+string(filepath.Separator)+name, name
		if rel != "" {
			crel = rel + "/" + name
		}
		if d.IsDir() {
			o.watchFolder(child, crel)
			continue
		}
		if d.Type()&fs.ModeSymlink != 0 {
			o.follow(child, crel)
		}
		if o.started {
			o.mark(crel)
		}
	}
}

// forget drops the watches at and below abs (a removed or renamed folder;
// a renamed folder's watch would otherwise report the old names).
func (o *owner) forget(abs string) {
	prefix := abs + string(filepath.Separator)
	for p := range o.watched {
		if p == abs || strings.HasPrefix(p, prefix) {
			_ = o.w.fs.Remove(p) // already gone for a removed folder
			delete(o.watched, p)
		}
	}
	o.linked.forgetTops(abs)
}

func (o *owner) abs(rel string) string {
	return filepath.Join(o.w.root, filepath.FromSlash(rel))
}

// rel returns abs relative to the root, slash-separated.
func (o *owner) rel(abs string) (string, bool) {
	r, err := filepath.Rel(o.w.root, abs)
	if err != nil {
		return "", false
	}
	r = filepath.ToSlash(r)
	if r == "." || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	return r, true
}

// targetOf returns the target holding rel, or "".
func (o *owner) targetOf(rel string) string {
	for _, t := range o.w.targets {
		if t == "." || rel == t || strings.HasPrefix(rel, t+"/") {
			return t
		}
	}
	return ""
}

// aboveTarget reports whether rel is a parent folder of some target.
func (o *owner) aboveTarget(rel string) bool {
	for _, t := range o.w.targets {
		if strings.HasPrefix(t, rel+"/") {
			return true
		}
	}
	return false
}

// hiddenBelow reports whether rel, inside target tgt, has a hidden name
// below tgt (".git", ".cache", editor temp files such as ".file.swp").
func hiddenBelow(tgt, rel string) bool {
	below := rel
	if tgt != "." {
		below = strings.TrimPrefix(rel[len(tgt):], "/")
	}
	if below == "" {
		return false
	}
	for _, part := range strings.Split(below, "/") {
		if part == "" || part[0] == '.' {
			return true
		}
	}
	return false
}
