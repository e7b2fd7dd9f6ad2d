package broker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/berth-dev/berth/api"
)

// vanishInterval is how often mounted roots are checked for existence: a
// project whose directory was removed or moved away is unmounted within it
// (plus the time to close the mount).
const vanishInterval = 500 * time.Millisecond

// dropVanished unmounts every project whose .praxis-os folder no longer
// exists, whoever holds it: its port is released and the event is logged.
// Holders notice their stream end; other projects are not touched. A
// folder (folders.go) is unmounted when it no longer exists, and when it
// holds a .praxis-os folder now: its shims attach again and get the
// project.
func (t *mounts) dropVanished(ctx context.Context) {
	type cand struct {
		id     string
		e      *entry
		root   string
		folder bool
	}
	var cands []cand
	t.mu.Lock()
	for id, e := range t.entries {
		if e.m != nil {
			cands = append(cands, cand{id, e, e.m.root, e.m.engine.Folder()})
		}
	}
	t.mu.Unlock()
	for _, c := range cands {
		if why := vanished(c.root, c.folder); why != "" {
			t.drop(ctx, c.id, c.e, why)
		}
	}
}

// drop unmounts the mount of e whoever holds it, if e is still id's
// entry: its holders notice their stream end.
func (t *mounts) drop(ctx context.Context, id string, e *entry, why string) {
	t.mu.Lock()
	if t.entries[id] != e || t.closed {
		t.mu.Unlock()
		return
	}
	if e.grace != nil {
		e.grace.Stop()
	}
	delete(t.entries, id)
	closed := t.beginClosingLocked(id)
	t.changedLocked()
	holders := len(e.holders)
	t.mu.Unlock()
	t.log.Warn(why+": unmounting", "project", id, "root", e.m.root, "port", e.m.portNow(), "holders", holders)
	t.unmount(ctx, e.m, why)
	closed()
	t.released(id)
}

// vanished says why the mount of root must end now, or "": a project's
// .praxis-os folder is gone; a folder is gone, or it became a project.
func vanished(root string, folder bool) string {
	pd, err := os.Stat(filepath.Join(root, api.ProjectDir))
	switch {
	case !folder && errors.Is(err, os.ErrNotExist):
		return "project directory vanished"
	case !folder:
		return ""
	case err == nil && pd.IsDir():
		return "the folder holds " + api.ProjectDir + "/ now: serving it as a project"
	}
	if fi, err := os.Stat(root); errors.Is(err, os.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return "folder vanished"
	}
	return ""
}
