package mounttable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/berth-dev/berth/broker/mcpserve"
	"github.com/berth-dev/berth/broker/pollio"
)

// The IDE never depends on the HTTP side. A project mounts without a port
// when every port of the range is taken: the shim's sessions (on the
// control API) are served as ever, the state file says stdio (no endpoint
// for sub-agents), and the attach answer, the log, the sessions (as
// notifications/message), get_server_info's missing and the dashboard say
// what is missing. A state file that cannot be written is the same kind of
// gap. Every reap_interval the broker tries again: it binds a port (the one
// the project had last, then its mcp.http_port, then the range), and
// writes the state files that failed.

// serve starts serving the port's routes on ln. It does nothing (and
// closes ln) once the mount is closed.
func (m *Mount) serve(ln net.Listener) {
	m.httpMu.Lock()
	defer m.httpMu.Unlock()
	if m.closed || m.srv != nil {
		ln.Close()
		return
	}
	m.port = ln.Addr().(*net.TCPAddr).Port
	m.portErr = nil
	log := m.log.With("port", m.port)
	m.srv = &http.Server{
		Handler:           m.handler,
		ReadHeaderTimeout: mcpserve.ReadTimeout,
		BaseContext:       func(net.Listener) context.Context { return m.ctx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	m.guard.Install(m.srv)
	// Its connections are read and written directly (broker/pollio):
	// each call on the port is a read and a write of one.
	ln = m.guard.Listener(pollio.Listener(ln))
	m.done = make(chan struct{})
	srv, done := m.srv, m.done
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("project endpoint stopped", "err", err)
		}
	}()
}

// portNow is the mount's port, or 0 while it has none.
func (m *Mount) portNow() int {
	m.httpMu.Lock()
	defer m.httpMu.Unlock()
	return m.port
}

// noPort says why the mount has no port, or "" when it has one.
func (m *Mount) noPort() string {
	m.httpMu.Lock()
	defer m.httpMu.Unlock()
	if m.port > 0 || m.portErr == nil {
		return ""
	}
	return fmt.Sprintf("no port for the project's HTTP endpoint (%v): sub-agents cannot reach it; the IDE's tools work, and the broker tries again every few seconds", m.portErr)
}

// lackPort records err, why the mount has no port yet.
func (m *Mount) lackPort(err error) {
	m.httpMu.Lock()
	defer m.httpMu.Unlock()
	m.portErr = err
}

// missing names what the broker cannot do for mount m now, each with its
// fix; stateErr is why its state file could not be written ("" when it was).
func missing(m *Mount, stateErr string) []string {
	var out []string
	if s := m.noPort(); s != "" {
		out = append(out, s)
	}
	if stateErr != "" {
		out = append(out, stateErr)
	}
	return out
}

// retryDegraded binds a port for each mount that has none and writes the
// state files that could not be written.
func (table *Table) retryDegraded() {
	type cand struct {
		id string
		sl *slot
	}
	var cands []cand
	table.mu.Lock()
	for id, sl := range table.slots {
		if sl.m != nil && (sl.m.portNow() == 0 || sl.stateErr != "") {
			cands = append(cands, cand{id, sl})
		}
	}
	table.mu.Unlock()
	for _, c := range cands {
		m := c.sl.m
		if m.portNow() == 0 {
			ln, err := table.bindFor(m.id, m.root, m.engine.Config().MCP.HTTPPort)
			if err != nil {
				m.lackPort(err)
				continue
			}
			m.serve(ln)
			if m.portNow() == 0 {
				continue // unmounted meanwhile
			}
			m.engine.Logger().Info("the project's HTTP endpoint is served now: sub-agents find it in the state file", "url", m.url())
			table.remember(c.sl, false)
		}
		_ = table.publish(c.id, c.sl)
	}
}
