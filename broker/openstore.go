package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/store"
	"github.com/shirou/gopsutil/v4/process"
)

// keepCorrupt is how many berth.db.corrupt-* copies are kept: the newest,
// for the user to look into; older ones are removed.
const keepCorrupt = 3

// openStore opens berth.db. A corrupt file (bad header, truncated,
// unreadable pages) is moved aside to berth.db.corrupt-<time> (only the
// keepCorrupt newest such copies are kept), a fresh one is created, and
// what can still be read page by page (the registry, every project's
// workflow state, and the server approvals proven current) is copied
// over; search indexes are derived and rebuilt as projects mount. A file
// with one damaged meta page opens a transaction older: the last one
// (a revocation, maybe) may be lost, so the server approvals are
// withdrawn. An empty file is said. The returned warnings say what
// happened: what was kept and what was lost, by name.
func openStore(home string, log *slog.Logger) (*store.DB, []string, error) {
	path := filepath.Join(home, api.DBName)
	db, err := store.Open(path, 2*time.Second)
	if errors.Is(err, store.ErrLocked) {
		return nil, nil, lockedBy(path, err)
	}
	if err == nil {
		warnings := openedWarnings(db)
		for _, w := range warnings {
			log.Warn(w)
		}
		return db, warnings, nil
	}
	if !errors.Is(err, store.ErrCorrupt) {
		return nil, nil, err
	}
	aside, merr := store.MoveAside(path)
	if merr != nil {
		return nil, nil, fmt.Errorf("%w; and it could not be moved aside: %v (move it yourself)", err, merr)
	}
	db, oerr := store.Open(path, 2*time.Second)
	if oerr != nil {
		return nil, nil, fmt.Errorf("create a fresh %s after moving the corrupt one to %s: %w", path, aside, oerr)
	}
	rep := store.Salvage(aside, db)
	warnings := []string{fmt.Sprintf("%s was corrupt (%v): moved aside to %s and rebuilt; kept %s; search indexes are rebuilt as projects mount",
		api.DBName, errors.Unwrap(err), aside, rep.Kept())}
	for _, l := range rep.Lost {
		warnings = append(warnings, "not recovered: "+l+" (the old file is kept at "+aside+")")
	}
	removed, perr := store.PruneAside(path, keepCorrupt)
	if len(removed) > 0 {
		warnings = append(warnings, fmt.Sprintf("removed %d older corrupt copies (%s): the %d newest are kept", len(removed), strings.Join(removed, ", "), keepCorrupt))
	}
	if perr != nil {
		warnings = append(warnings, fmt.Sprintf("could not remove older corrupt copies of %s: %v", api.DBName, perr))
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	return db, warnings, nil
}

// openedWarnings says what store.Open found in a file it could open: an
// empty one, or one damaged meta page, after which the server approvals
// are withdrawn (the transaction lost may have been a revocation: a
// rollback must never turn distrust into trust).
func openedWarnings(db *store.DB) []string {
	o := db.Opening()
	switch {
	case o.Empty:
		return []string{fmt.Sprintf("%s was empty (0 bytes): it was started as a new database; the projects, workflow sessions and server approvals it held are gone (a full disk, or a copy that did not finish?)", db.Path())}
	case o.RolledBack:
		w := fmt.Sprintf("%s had one of its two header (meta) pages damaged: it was opened at transaction %d, the one before, and the last transaction before the damage may be lost", db.Path(), o.Txid)
		n, err := db.DropAreas(hosted.ApprovalArea)
		switch {
		case err != nil:
			w += fmt.Sprintf("; withdrawing the server approvals failed: %v (run `berth servers revoke DIR` for each project)", err)
		case n > 0:
			w += fmt.Sprintf("; the server approvals of %d projects were withdrawn, as nothing proves them current (approve them again with `berth servers approve DIR`)", n)
		}
		return []string{w}
	}
	return nil
}

// cleanStaleStateFiles removes the state files of known projects that name
// a broker process that no longer runs (left by a broker that was killed).
// A file naming a live process, or this broker, is left alone.
func (b *Broker) cleanStaleStateFiles(ctx context.Context) {
	recs, _, err := b.db.Projects()
	if err != nil {
		b.log.Warn("read registry for stale state files", "err", err)
		return
	}
	for _, rec := range recs {
		if ctx.Err() != nil {
			return
		}
		p := api.StatePath(rec.Root)
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var sf struct {
			PID int `json:"pid"`
		}
		why := "its broker is gone"
		if json.Unmarshal(raw, &sf) != nil || sf.PID <= 0 {
			why = "it cannot be read"
		} else if sf.PID == os.Getpid() || api.ProcessAlive(sf.PID) {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.log.Warn("remove stale state file", "project", rec.ID, "file", p, "err", err)
			continue
		}
		b.log.Info("removed stale state file", "project", rec.ID, "file", p, "pid", sf.PID, "why", why)
	}
}

// lockedBy names the process that holds berth.db open (this broker holds
// the home's lock, so it is not a broker of this home: a copy of the home,
// a backup tool, an older Berth).
func lockedBy(path string, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	procs, perr := process.ProcessesWithContext(ctx)
	if perr != nil {
		return err
	}
	for _, p := range procs {
		if p.Pid == int32(os.Getpid()) {
			continue
		}
		files, ferr := p.OpenFilesWithContext(ctx)
		if ferr != nil {
			continue
		}
		for _, f := range files {
			if f.Path != path {
				continue
			}
			name, _ := p.NameWithContext(ctx)
			if name == "berth" {
				return &RunningError{PID: int(p.Pid), Detail: fmt.Sprintf(" with %s open: stop it (`kill %d`); only one broker may open it", path, p.Pid)}
			}
			return fmt.Errorf("%w: %s (pid %d) has it open; stop it, only the broker may open berth.db", err, name, p.Pid)
		}
	}
	return err
}
