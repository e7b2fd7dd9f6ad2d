package hosted

import (
	"log/slog"
	"sync"
)

// echoes are the loggers of the projects holding a share: user server
// (ProjectSpec.Echo): its stderr lines are logged once to the broker's log
// and also kept in each holding project's recent logs.
type echoes struct {
	mu   sync.Mutex // a leaf: nothing is called while it is held
	logs map[*lease]*slog.Logger
}

func (e *echoes) add(l *lease, log *slog.Logger) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.logs == nil {
		e.logs = map[*lease]*slog.Logger{}
	}
	e.logs[l] = log
}

func (e *echoes) remove(l *lease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.logs, l)
}

// line logs one stderr line of the server to every holder's logger.
func (e *echoes) line(server, text string) {
	e.mu.Lock()
	logs := make([]*slog.Logger, 0, len(e.logs))
	for _, l := range e.logs {
		logs = append(logs, l)
	}
	e.mu.Unlock()
	for _, l := range logs {
		l.Info("hosted server stderr", "server", server, "line", text)
	}
}
