package mounttable

import (
	"context"
	"time"
)

// closeWaitLimit bounds how long a lookup waits for a mount being closed:
// a shutdown is bounded itself (Mount.shutdown), this is a backstop.
const closeWaitLimit = 10 * time.Second

// beginClosingLocked records that id's mount, already out of the table, is
// being closed; the returned func, called once it is, ends that. Until
// then a lookup of id waits (awaitClosed): "not mounted" is said only once
// the port is released and the engine closed, and a new mount of the same
// root never runs beside the old one.
func (table *Table) beginClosingLocked(id string) (closed func()) {
	if table.closing == nil {
		table.closing = make(map[string]chan struct{})
	}
	done := make(chan struct{})
	table.closing[id] = done
	return func() {
		table.mu.Lock()
		if table.closing[id] == done {
			delete(table.closing, id)
		}
		table.mu.Unlock()
		close(done)
	}
}

// awaitClosed returns once no mount of id is being closed, or when ctx
// ends or closeWaitLimit passes.
func (table *Table) awaitClosed(ctx context.Context, id string) {
	table.mu.Lock()
	done := table.closing[id]
	table.mu.Unlock()
	if done == nil {
		return
	}
	if ctx == nil { // a table made without the broker's lifetime (tests)
		ctx = context.Background()
	}
	limit := time.NewTimer(closeWaitLimit)
	defer limit.Stop()
	select {
	case <-done:
	case <-ctx.Done():
	case <-limit.C:
	}
}
