package mounttable

import (
	"net/http"

	"github.com/berth-dev/berth/api"
)

// shimRoute is the project's MCP endpoint on the control API, for the
// holder of lease: a live shim (or `berth call`) that attached project id.
// Its sessions are IDE sessions (mcp.max_sessions never refuses them), so
// only a holder whose process is alive gets one.
func (table *Table) ShimRoute(id, lease string, alive func(int) bool) (http.Handler, error) {
	if lease == "" {
		return nil, api.Errorf(http.StatusForbidden, api.CodeLeaseRequired,
			"/projects/%s/mcp serves the project's holders: attach first (POST /projects with your pid) and send the lease in the %s header", id, api.LeaseHeader)
	}
	table.mu.Lock()
	sl, ok := table.slots[id]
	if !ok || sl.m == nil {
		table.mu.Unlock()
		return nil, api.Errorf(http.StatusNotFound, api.CodeNotMounted, "project %s is not mounted (see `berth projects`)", id)
	}
	h, held := sl.holders[lease]
	m := sl.m
	table.mu.Unlock()
	switch {
	case !held:
		return nil, api.Errorf(http.StatusForbidden, api.CodeLeaseNotHeld, "lease %s is not held on project %s: attach again", lease, id)
	case h.kind != api.HolderShim || h.pid <= 1 || !alive(h.pid):
		return nil, api.Errorf(http.StatusForbidden, api.CodeHolderNotLive,
			"lease %s on project %s is not held by a running process (a pin, or a holder that exited): attach with your own pid", lease, id)
	}
	return m.shimHandler, nil
}
