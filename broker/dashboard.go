package broker

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/finder"
	"github.com/berth-dev/berth/broker/mcpserve"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/mounttable"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/logring"
	"github.com/berth-dev/berth/project/search"
	"github.com/shirou/gopsutil/v4/process"
)

// dashboardLogLines is how many of the broker's last log lines the dashboard
// shows: info and above (debug lines are get_recent_logs' business).
const dashboardLogLines = 80

// dashboard is the state the dashboard's event stream sends. It should
// not log (a log line pokes the stream; the hub ignores pokes made while
// it builds, so a line logged here shows up only at the next tick).
func (b *Broker) dashboard() any {
	d := api.Dashboard{Health: b.Health(), Projects: []api.DashboardProject{}, Logs: []api.LogLine{}, Transports: mcpserve.TransportNames()}
	for _, m := range b.mounts.All() {
		_, p, err := b.mounts.Get(m.ID())
		if err != nil {
			continue // unmounted meanwhile
		}
		p.Detail = m.Engine().Status()
		d.Projects = append(d.Projects, api.DashboardProject{Project: p, Calls: m.RecentCalls(), Servers: b.mountServers(m).Servers, Clients: m.Clients()})
	}
	slices.SortFunc(d.Projects, func(x, y api.DashboardProject) int { return strings.Compare(x.Root, y.Root) })
	for _, r := range b.logs.Recent("", logring.Query{MinLevel: slog.LevelInfo, Limit: dashboardLogLines}) {
		d.Logs = append(d.Logs, api.LogLine{Time: r.Time.UTC(), Level: r.Level, Message: r.Message, Project: r.Project, Attrs: r.Attrs})
	}
	return d
}

// unknownTool labels calls of tools the project does not offer, so a
// client cannot grow the metrics without bound by inventing names.
const unknownTool = "unknown"

// toolCalled feeds a mount's tool call to the metrics and the dashboard.
func (b *Broker) toolCalled(m *mounttable.Mount, c api.ToolCall) {
	tool := c.Tool
	if !slices.Contains(m.Engine().ToolNames(), tool) && !m.ServesHosted(tool) && tool != finder.FindTools && tool != finder.CallTool {
		tool = unknownTool
	}
	b.metrics.ToolCall(m.ID(), tool, metrics.Outcome(c.OK), time.Duration(c.DurationMS*float64(time.Millisecond)))
	b.hub.Poke()
}

// metricsSnapshot is read at every scrape of /metrics.
func (b *Broker) metricsSnapshot() metrics.Snapshot {
	s := metrics.Snapshot{Sessions: make(map[string]int)}
	for _, name := range mcpserve.TransportNames() {
		s.Sessions[name] = 0
	}
	for _, m := range b.mounts.All() {
		s.Mounts++
		for tr, n := range m.SessionCounts().ByTransport {
			s.Sessions[tr] += n
		}
		if st, ok := m.Engine().IndexStatus(); ok {
			s.Indexes = append(s.Indexes, metrics.Index{Project: m.ID(), Files: st.Files, Chunks: st.Chunks})
		}
	}
	return s
}

// search answers GET /projects/{id}/search for the dashboard.
func (b *Broker) search(ctx context.Context, id, q string, n int) (any, error) {
	m, _, err := b.mounts.Get(id)
	if err != nil {
		return nil, err
	}
	res, err := m.Engine().Search(ctx, search.Query{Text: q, N: n})
	switch {
	case errors.Is(err, project.ErrSearchOff):
		return nil, api.Errorf(http.StatusConflict, api.CodeSearchOff, "%v", err)
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil:
		return nil, api.Errorf(http.StatusBadRequest, api.CodeBadQuery, "%v", err)
	}
	return res, nil
}

// rss is the broker's resident memory, or 0 when the OS does not say.
func (b *Broker) rss() uint64 {
	if b.proc == nil {
		return 0
	}
	mi, err := b.proc.MemoryInfo()
	if err != nil {
		return 0
	}
	return mi.RSS
}

func selfProcess() *process.Process {
	p, err := process.NewProcess(int32(os.Getpid()))
	if err != nil {
		return nil
	}
	return p
}

// serversMetrics is read at every scrape of /metrics: each mounted
// project's declared servers.
func (b *Broker) serversMetrics() []metrics.Server {
	var out []metrics.Server
	for _, m := range b.mounts.All() {
		for _, st := range m.HostedStatus() {
			out = append(out, metrics.Server{Project: m.ID(), ServerStatus: st})
		}
	}
	return out
}
