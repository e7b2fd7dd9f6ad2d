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
// Holders notice their stream end; other projects are not touched.
func (t *mounts) dropVanished(ctx context.Context) {
	type cand struct {
		id   string
		e    *entry
		root string
	}
	var cands []cand
	t.mu.Lock()
	for id, e := range t.entries {
		if e.m != nil {
			cands = append(cands, cand{id, e, e.m.root})
		}
	}
	t.mu.Unlock()
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c.root, api.ProjectDir)); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		t.mu.Lock()
		if t.entries[c.id] != c.e || t.closed {
			t.mu.Unlock()
			continue
		}
		if c.e.grace != nil {
			c.e.grace.Stop()
		}
		delete(t.entries, c.id)
		t.changedLocked()
		holders := len(c.e.holders)
		t.mu.Unlock()
		t.log.Warn("project directory vanished: unmounting", "project", c.id, "root", c.root, "port", c.e.m.portNow(), "holders", holders)
		t.unmount(ctx, c.e.m, "project directory vanished")
		t.released(c.id)
	}
}
