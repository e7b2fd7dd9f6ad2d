package mounttable

import (
	"log/slog"
	"sync"
	"time"
)

// slowClose is how long a mount's shutdown may take before the log names
// the step it waits in, and how long one step may take before its time is
// logged: every step is bounded or quick, so one past it is a fault to find.
const slowClose = 5 * time.Second

// closeSteps runs a mount's shutdown as named steps, one after another,
// and says which one holds it up: while a shutdown is past slowClose, a
// warning names its step (once per slowClose); a step that took longer
// is logged with its time when it ends.
type closeSteps struct {
	log   *slog.Logger
	begin time.Time
	watch *time.Timer

	mu   sync.Mutex
	step string // the step running now
}

// startClose begins a shutdown's watch; call done at its end.
func startClose(log *slog.Logger) *closeSteps {
	c := &closeSteps{log: log, begin: time.Now()}
	c.watch = time.AfterFunc(slowClose, c.warn)
	return c
}

func (c *closeSteps) warn() {
	c.mu.Lock()
	step := c.step
	c.mu.Unlock()
	if step == "" {
		return // done
	}
	c.log.Warn("closing the project is slow", "waiting_for", step, "after", time.Since(c.begin).Round(time.Millisecond))
	c.watch.Reset(slowClose)
}

// run runs step, named what.
func (c *closeSteps) run(what string, step func()) {
	c.mu.Lock()
	c.step = what
	c.mu.Unlock()
	start := time.Now()
	step()
	if took := time.Since(start); took > slowClose {
		c.log.Warn("a step of closing the project was slow", "step", what, "took", took.Round(time.Millisecond))
	}
}

// done ends the watch.
func (c *closeSteps) done() {
	c.mu.Lock()
	c.step = ""
	c.mu.Unlock()
	c.watch.Stop()
}
