package mounttable

import (
	"cmp"
	"errors"
	"net"
	"slices"
	"time"

	"github.com/berth-dev/berth/broker/loopback"
	"github.com/berth-dev/berth/store"
)

// A port is a project's identity to its clients: a sub-agent that saved
// a project's URL, or that initializes again at the same URL after a 404,
// must reach that project or nothing. So the port a project had last
// (its registry record's LastPort) stays reserved for it while it is not
// mounted: other projects get other ports. Only when the range has no
// port that is both free and unreserved is a reservation given away: the
// least recently used one (UsedAt), with a log line naming both projects;
// the project that lost it gets another port when it mounts again.

// usedResolution is how stale a record's UsedAt may be before a mount
// writes it again: a mount writes the registry only when something it
// records changed, and an hour is fine grain for choosing which
// reservation to give away. Unmounts write it exactly.
const usedResolution = time.Hour

// bindFor binds a port for project id (at root): the one it had last, else
// the one its config asks for (configured, 0 for none) unless another
// project reserved it, else the range's first free and unreserved one,
// else the least recently used reservation of a project not mounted.
func (table *Table) bindFor(id, root string, configured int) (net.Listener, error) {
	recs, _, err := table.db.Projects()
	if err != nil {
		table.log.Warn("read the registry for the ports remembered for projects; binding without them", "err", err)
	}
	var own int
	for _, r := range recs {
		if r.ID == id {
			own = r.LastPort
		}
	}
	others := make(map[int]store.ProjectRecord)
	for _, r := range recs {
		if r.ID != id && r.LastPort > 0 && r.LastPort != own {
			others[r.LastPort] = r
		}
	}
	ln, _, err := bindPort([]int{own, configured}, table.cfg.PortStart, table.cfg.PortEnd, func(p int) bool {
		_, ok := others[p]
		return ok
	})
	if err == nil || !errors.Is(err, errPortsFull) {
		return ln, err
	}
	if ln := table.takeReservation(id, root, others); ln != nil {
		return ln, nil
	}
	return nil, err
}

// takeReservation binds the port of the least recently used reservation
// in the range whose project does not hold it now, and forgets that
// reservation; nil when every such port is held.
func (table *Table) takeReservation(id, root string, others map[int]store.ProjectRecord) net.Listener {
	var cands []store.ProjectRecord
	for p, r := range others {
		if p >= table.cfg.PortStart && p <= table.cfg.PortEnd {
			cands = append(cands, r)
		}
	}
	slices.SortFunc(cands, func(a, b store.ProjectRecord) int {
		return cmp.Or(a.UsedAt.Compare(b.UsedAt), a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.LastPort, b.LastPort))
	})
	for _, r := range cands {
		ln, err := loopback.Listen(r.LastPort)
		if err != nil { // its project, or another program, holds it
			table.log.Info("a port remembered for another project is held; trying the next", "port", r.LastPort, "from_project", r.ID, "err", err)
			continue
		}
		table.regMu.Lock()
		err = table.db.EditProjects([]string{r.ID}, func(rec *store.ProjectRecord) bool {
			if rec.LastPort != r.LastPort {
				return false
			}
			rec.LastPort, rec.UpdatedAt = 0, time.Now().UTC()
			return true
		})
		table.regMu.Unlock()
		if err != nil {
			table.log.Warn("registry write failed", "project", r.ID, "err", err)
		}
		table.log.Warn("gave a port remembered for one project to another: every other port of the range is taken or remembered; the first project gets another port when it mounts again",
			"port", r.LastPort, "project", id, "root", root, "from_project", r.ID, "from_root", r.Root, "from_last_used", r.UsedAt)
		return ln
	}
	return nil
}

// released records that the projects ids stopped being served now (their
// reservations' last use), in one registry write.
func (table *Table) released(ids ...string) {
	if len(ids) == 0 {
		return
	}
	now := time.Now().UTC()
	table.regMu.Lock()
	defer table.regMu.Unlock()
	err := table.db.EditProjects(ids, func(rec *store.ProjectRecord) bool {
		rec.UsedAt = now
		return true
	})
	if err != nil {
		table.log.Warn("registry write failed", "projects", ids, "err", err)
	}
}
