package mounttable

import (
	"errors"
	"fmt"
	"os"

	"github.com/berth-dev/berth/api"
)

// The broker is the one writer of state files: only it knows every holder
// of a project. It writes a mount's file whenever its holders change (an
// attach, a detach, a dead shim reaped, a pin remounted at start), from
// what they asked for (api.StateTransport), and removes it at unmount. A
// mount nobody holds (its grace period) keeps its last file. Writes of one
// mount are serialized by its stateMu, and each writes what the table says
// at that moment, so the last write is always the current state.

// publish writes the state file of the mount of sl for its holders now. It
// writes nothing once sl has left the table (the unmount removes the file)
// or while nobody holds it. A failure is logged and returned as the
// warning an attach answers with: it never fails the attach.
func (table *Table) publish(id string, sl *slot) error {
	table.mu.Lock()
	m := sl.m
	table.mu.Unlock()
	if m == nil || m.engine.Folder() {
		return nil // a folder gets no state file (folders.go)
	}
	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	table.mu.Lock()
	if table.slots[id] != sl || len(sl.holders) == 0 {
		table.mu.Unlock()
		return nil
	}
	asked := make([]string, 0, len(sl.holders))
	for _, h := range sl.holders {
		asked = append(asked, h.transport)
	}
	transport, port := api.StateTransport(asked), m.portNow()
	if port == 0 {
		transport = api.TransportStdio // no endpoint to offer yet (portretry.go)
	}
	sf := api.NewStateFile(transport, port, table.info.PID, m.startedAt, m.name, m.root)
	sf.Headers = table.headers()
	table.mu.Unlock()

	err := api.WriteStateFile(m.root, sf)
	var msg string
	if err != nil {
		msg = fmt.Sprintf("the state file %s could not be written (%v): sub-agents cannot find the project's HTTP endpoint; the IDE's tools work. Make its place writable (remove what is there); the broker tries again every few seconds", api.StatePath(m.root), err)
	}
	table.mu.Lock()
	was := sl.stateErr
	sl.published, sl.stateErr = sf.Transport, msg
	if err != nil {
		sl.published = ""
	}
	table.mu.Unlock()
	// Said once when it starts failing and once when it works again (the
	// broker retries every reap_interval): to the log and the sessions.
	switch {
	case err != nil && was != msg:
		m.engine.Logger().Warn("state file not written: sub-agents cannot find the project's endpoint", "file", api.StatePath(m.root), "err", err)
	case err == nil && was != "":
		m.engine.Logger().Info("state file written again: sub-agents find the project's endpoint", "file", api.StatePath(m.root))
	}
	if err != nil {
		return errors.New(msg)
	}
	return nil
}

// unpublish removes the mount's state file if it still names this broker
// and the mount's port (another broker may have written it since).
func (table *Table) unpublish(m *Mount) {
	if m.engine.Folder() {
		return
	}
	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	removed, err := api.RemoveStateFileIf(m.root, table.info.PID, m.portNow())
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		table.log.Warn("remove state file", "project", m.id, "err", err)
	case removed:
		table.log.Debug("state file removed", "project", m.id)
	}
}

// headers is what a client must send to a project port.
func (table *Table) headers() map[string]string {
	if table.token == "" {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + table.token}
}
