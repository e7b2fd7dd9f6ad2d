package broker

import (
	"net/http"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/api"
)

// checkRoot refuses a relative root: it would be resolved against the
// broker's working directory, which is not the caller's.
func checkRoot(root string) error {
	if strings.TrimSpace(root) != "" && !filepath.IsAbs(root) {
		return api.Errorf(http.StatusBadRequest, api.CodeRelativeRoot,
			"root %q is relative: the broker would resolve it against its own working directory; send an absolute path", root)
	}
	return nil
}

// checkPID refuses a shim attach that names no live process: its hold
// ends when that process dies, so without one (pid missing, 0, or 1,
// which never exits) it would hold the project forever. Pins (kind cli)
// are held until `berth detach` and need none.
func checkPID(kind string, pid int, alive func(int) bool) error {
	if kind != api.HolderShim {
		return nil
	}
	if pid <= 1 {
		return api.Errorf(http.StatusBadRequest, api.CodePIDRequired,
			"a %s attach needs the pid of the process whose life holds the project (got %d): send \"pid\", or attach with kind %q to pin it",
			api.HolderShim, pid, api.HolderCLI)
	}
	if !alive(pid) {
		return api.Errorf(http.StatusBadRequest, api.CodePIDRequired,
			"pid %d is not a running process on this machine: send the pid of the attaching process", pid)
	}
	return nil
}

// shimRoute is the project's MCP endpoint on the control API, for the
// holder of lease: a live shim (or `berth call`) that attached project id.
// Its sessions are IDE sessions (mcp.max_sessions never refuses them), so
// only a holder whose process is alive gets one.
func (t *mounts) shimRoute(id, lease string, alive func(int) bool) (http.Handler, error) {
	if lease == "" {
		return nil, api.Errorf(http.StatusForbidden, api.CodeLeaseRequired,
			"/projects/%s/mcp serves the project's holders: attach first (POST /projects with your pid) and send the lease in the %s header", id, api.LeaseHeader)
	}
	t.mu.Lock()
	e, ok := t.entries[id]
	if !ok || e.m == nil {
		t.mu.Unlock()
		return nil, api.Errorf(http.StatusNotFound, api.CodeNotMounted, "project %s is not mounted (see `berth projects`)", id)
	}
	h, held := e.holders[lease]
	m := e.m
	t.mu.Unlock()
	switch {
	case !held:
		return nil, api.Errorf(http.StatusForbidden, api.CodeLeaseNotHeld, "lease %s is not held on project %s: attach again", lease, id)
	case h.kind != api.HolderShim || h.pid <= 1 || !alive(h.pid):
		return nil, api.Errorf(http.StatusForbidden, api.CodeHolderNotLive,
			"lease %s on project %s is not held by a running process (a pin, or a holder that exited): attach with your own pid", lease, id)
	}
	return m.shimHandler, nil
}
