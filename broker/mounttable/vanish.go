package mounttable

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
func (table *Table) dropVanished() {
	type cand struct {
		id     string
		sl     *slot
		root   string
		folder bool
	}
	var cands []cand
	table.mu.Lock()
	for id, sl := range table.slots {
		if sl.m != nil {
			cands = append(cands, cand{id, sl, sl.m.root, sl.m.engine.Folder()})
		}
	}
	table.mu.Unlock()
	for _, c := range cands {
		if why := vanished(c.root, c.folder); why != "" {
			table.drop(c.id, c.sl, why)
		}
	}
}

// drop takes the mount of sl out of the table whoever holds it, if sl is
// still id's slot, and closes it in the background: its holders notice
// their stream end. The caller does not wait for the close, so one slow
// close holds up neither the housekeeping of every other project nor an
// attach; an attach or a lookup of id waits for it (awaitClosed), as
// CloseAll does.
func (table *Table) drop(id string, sl *slot, why string) {
	table.mu.Lock()
	if table.slots[id] != sl || table.shuttingDown {
		table.mu.Unlock()
		return
	}
	holders := len(sl.holders)
	out := table.takeOutLocked(id, sl)
	table.mu.Unlock()
	table.log.Warn(why+": unmounting", "project", id, "root", sl.m.root, "port", sl.m.portNow(), "holders", holders)
	go table.unmountTaken(context.Background(), why, out)
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
