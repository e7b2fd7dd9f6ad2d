package mounttable

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/api"
)

// An attach goes in four steps, each below: check the request
// (checkAttach), find or mount its project's slot (lockSlot), add the
// holder (holdLocked), then record, publish and describe what changed
// (announce). Only holdLocked changes the slot; the table's lock is
// taken for the lookup and the hold together, so that a grace period
// cannot end between them.
func (table *Table) Attach(ctx context.Context, req api.AttachRequest) (api.AttachResponse, error) {
	for {
		a, err := checkAttach(req)
		if err != nil {
			return api.AttachResponse{}, err
		}
		table.awaitClosed(ctx, a.id) // a mount of the root being closed is gone first (closing.go)
		sl, fresh, err := table.lockSlot(ctx, a)
		if errors.Is(err, errAttachAgain) {
			continue // the root is resolved again: it may have changed kind
		}
		if err != nil {
			return api.AttachResponse{}, err
		}
		lease, record := table.holdLocked(sl, a, fresh)
		table.mu.Unlock()
		return table.announce(sl, a, req, lease, record), nil
	}
}

// attachment is an attach request checked, with its defaults filled in.
type attachment struct {
	root, id  string
	folder    bool   // root is a folder in no project (folders.go)
	kind      string // api.HolderShim or api.HolderCLI
	pid       int
	transport string // one of api.StateTransports
}

// checkAttach checks req and resolves its root; an error names the fix.
func checkAttach(req api.AttachRequest) (attachment, error) {
	if err := checkRoot(req.Root); err != nil {
		return attachment{}, err
	}
	kind := req.Kind
	if kind == "" {
		kind = api.HolderShim
	}
	root, folder, err := attachRoot(req.Root, req.Folder, kind)
	if err != nil {
		return attachment{}, err
	}
	if kind != api.HolderShim && kind != api.HolderCLI {
		return attachment{}, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "kind %q: use %q or %q", kind, api.HolderShim, api.HolderCLI)
	}
	if req.PID < 0 {
		return attachment{}, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "pid %d is not a process id", req.PID)
	}
	if err := checkPID(kind, req.PID, api.ProcessAlive); err != nil {
		return attachment{}, err
	}
	transport := req.Transport
	switch {
	case transport == "" && kind == api.HolderCLI:
		transport = api.TransportHTTP
	case transport == "":
		transport = api.TransportDual
	case !slices.Contains(api.StateTransports, transport):
		return attachment{}, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "transport %q: use one of %s",
			transport, strings.Join(api.StateTransports, ", "))
	}
	return attachment{root: root, id: api.ProjectID(root), folder: folder, kind: kind, pid: req.PID, transport: transport}, nil
}

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

// errAttachAgain says the slot an attach waited for went away, or its
// root changed kind: the attach starts over.
var errAttachAgain = errors.New("attach again")

// errShuttingDown refuses an attach once the table is closed.
func errShuttingDown() error {
	return api.Errorf(http.StatusServiceUnavailable, api.CodeShuttingDown, "broker is shutting down: retry in a moment")
}

// lockSlot returns a's slot with table.mu held: a new one (fresh) whose
// project it mounted, or the one in the table once the attach that mounts
// it is done. On error table.mu is not held.
func (table *Table) lockSlot(ctx context.Context, a attachment) (sl *slot, fresh bool, err error) {
	table.mu.Lock()
	if table.shuttingDown {
		table.mu.Unlock()
		return nil, false, errShuttingDown()
	}
	if sl, ok := table.slots[a.id]; ok {
		table.mu.Unlock()
		return sl, false, table.join(ctx, a, sl)
	}
	sl = &slot{ready: make(chan struct{}), holders: make(map[string]holder)}
	table.slots[a.id] = sl
	table.changedLocked()
	table.mu.Unlock()
	return sl, true, table.mountSlot(a, sl)
}

// mountSlot opens a's project into sl, a new slot that attaches of the
// same root wait on, and returns with table.mu held; on error, with sl out of
// the table and table.mu not held.
func (table *Table) mountSlot(a attachment, sl *slot) error {
	m, err := table.open(a.root, a.id, a.folder)
	table.mu.Lock()
	sl.m, sl.err = m, err
	close(sl.ready)
	if err != nil {
		delete(table.slots, a.id)
		table.changedLocked()
		table.mu.Unlock()
		return err
	}
	if table.shuttingDown {
		// The broker began stopping while this mount opened: CloseAll
		// took out only the mounts already up, so this one is closed here.
		table.mu.Unlock()
		table.unmount(context.Background(), m, "broker stopping")
		return errShuttingDown()
	}
	return nil
}

// join waits until sl, the slot of a's project, is mounted, and returns
// with table.mu held; on error (errAttachAgain among them) table.mu is not held.
func (table *Table) join(ctx context.Context, a attachment, sl *slot) error {
	select {
	case <-sl.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	table.mu.Lock()
	if sl.err != nil {
		table.mu.Unlock()
		return sl.err
	}
	if table.slots[a.id] != sl {
		// It was unmounted while we waited.
		table.mu.Unlock()
		return errAttachAgain
	}
	if sl.m.engine.Folder() != a.folder {
		// The folder became a project, or the project lost its
		// .praxis-os/, since it was mounted: what dropVanished would do
		// within vanishInterval is done now, and the attach gets the root
		// as it is.
		table.mu.Unlock()
		table.drop(a.id, sl, "the root changed kind: mounting it again")
		return errAttachAgain
	}
	return nil
}

// holdLocked adds a's holder to sl under a new lease and stops sl's grace
// period. record says whether the registry must be written: only when
// what it records changes (a new mount, a new pin), so that a warm attach
// touches no disk.
func (table *Table) holdLocked(sl *slot, a attachment, fresh bool) (lease string, record bool) {
	lease = newLease()
	sl.holders[lease] = holder{kind: a.kind, pid: a.pid, transport: a.transport}
	record = fresh || (a.kind == api.HolderCLI && !sl.pinned)
	if a.kind == api.HolderCLI {
		sl.pinned = true
	}
	if sl.grace != nil {
		sl.grace.Stop()
		sl.grace = nil
	}
	return lease, record
}

// announce writes what the attach changed (the registry when record, the
// state file) and answers it; what could not be written becomes a
// warning of the answer.
func (table *Table) announce(sl *slot, a attachment, req api.AttachRequest, lease string, record bool) api.AttachResponse {
	m := sl.m
	if record {
		table.remember(sl, a.kind == api.HolderCLI)
	}
	var warnings []string
	if s := m.noPort(); s != "" {
		warnings = append(warnings, s)
	}
	if err := table.publish(a.id, sl); err != nil {
		warnings = append(warnings, err.Error())
	}
	table.mu.Lock()
	h := sl.heldLocked()
	table.mu.Unlock()
	resp := api.AttachResponse{
		Project: describe(a.id, m, h), Lease: lease,
		BrokerPID: table.info.PID, Headers: table.headers(), BrokerVersion: api.Version, BrokerProtocol: api.Protocol(), Warnings: warnings,
	}
	table.log.Info("attached", "project", a.id, "root", a.root, "kind", a.kind, "transport", a.transport, "pid", a.pid, "port", m.portNow(), "version", req.Version)
	if req.Protocol != api.Protocol() && (req.Protocol != 0 || req.Version != "") {
		table.log.Warn("client and broker protocols differ", "client_protocol", req.Protocol, "broker_protocol", api.Protocol(), "client", req.Version, "broker", api.Version, "pid", a.pid)
	}
	return resp
}
