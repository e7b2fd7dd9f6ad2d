package mounttable

import (
	"time"

	"github.com/berth-dev/berth/store"
)

// remember records the mount of sl in the registry, so that a pinned
// project is mounted again after a restart and keeps its port.
//
// Only a pin or an unpin (pinChange: `berth attach`, `berth detach`)
// changes the record's pinned flag; any other write keeps what the record
// says. A shim that attaches to a new broker before it has remounted its
// pinned projects (it reads the registry as it starts) must not unpin
// one. Writes are serialized by regMu and read the table's pin state when
// they run, not when their caller decided to write, so whatever order
// concurrent attaches and detaches reach this in, the last write records
// the table's latest pin state.
//
// A record that cannot be read is not rewritten by a write that is not a
// pin change: that write does not know the pin, and writing false would
// unpin the project. A pin change knows it and writes the record anew.
//
// A record that already says all this, and whose UsedAt is less than
// usedResolution old, is not written again (the write's fsyncs were on the
// path of every first attach after a broker start), so UpdatedAt is when
// the record last changed.
func (table *Table) remember(sl *slot, pinChange bool) {
	table.regMu.Lock()
	defer table.regMu.Unlock()
	table.mu.Lock()
	m, pinned := sl.m, sl.pinned
	table.mu.Unlock()
	rec, ok, err := table.db.GetProject(m.id)
	if err != nil {
		if !pinChange {
			table.log.Warn("registry read failed; the project's record is left as it is (`berth attach` or `berth detach` writes it anew)", "project", m.id, "err", err)
			return
		}
		table.log.Warn("registry read failed; writing the project's record anew", "project", m.id, "err", err)
		rec, ok = store.ProjectRecord{}, false
	}
	if ok && !pinChange {
		pinned = pinned || rec.Pinned
	}
	port := m.portNow()
	if port == 0 && ok {
		port = rec.LastPort // mounted without one: keep the port to ask for next time
	}
	now := time.Now().UTC()
	var admin, repo string
	if m.repo != nil {
		admin, repo = m.repo.id.AdminDir, m.repo.id.ID
	}
	same := ok && rec.Root == m.root && rec.Name == m.name && rec.Pinned == pinned && rec.LastPort == port && rec.WorktreeAdmin == admin && rec.Repository == repo
	if same && now.Sub(rec.UsedAt) < usedResolution {
		return
	}
	if !ok {
		rec = store.ProjectRecord{ID: m.id, CreatedAt: now}
	}
	if !same {
		rec.UpdatedAt = now
	}
	rec.Root, rec.Name, rec.Pinned, rec.LastPort, rec.UsedAt, rec.WorktreeAdmin, rec.Repository = m.root, m.name, pinned, port, now, admin, repo
	if err := table.db.PutProject(rec); err != nil {
		table.log.Warn("registry write failed", "project", m.id, "err", err)
	}
}
