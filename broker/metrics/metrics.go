// Package metrics is the broker's Prometheus instrumentation. It owns the
// Prometheus client library: the rest of the broker records through the
// methods here, and /metrics serves this package's own registry (never the
// global one, so nothing a dependency registers leaks in).
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Tool call outcomes.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// Snapshot is the state read at scrape time.
type Snapshot struct {
	Mounts   int
	Sessions map[string]int // by transport
	Indexes  []Index
}

// Index is one project's search index size.
type Index struct {
	Project       string
	Files, Chunks int
}

// Metrics holds the broker's collectors.
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	callTime *prometheus.HistogramVec
	attach   *prometheus.HistogramVec
	restarts prometheus.Counter
	sessions map[string]*prometheus.CounterVec // by SessionEvent
}

// Session events, counted per project (SessionEvent).
const (
	SessionEvicted  = "evicted"   // an idle session ended to admit a new one (or past the idle sessions kept)
	SessionRefused  = "refused"   // a new session refused: every place busy
	SessionTimedOut = "timed_out" // a session ended by session_timeout
	SessionRestored = "restored"  // a streamable HTTP session connected again after a broker restart
)

// New registers the broker's metrics; snap is called on every scrape for
// the gauges (mounts, sessions, index sizes).
func New(version string, snap func() Snapshot) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_tool_calls_total",
			Help: "MCP tool calls answered, by project, tool and outcome (error: a protocol error or a tool result with isError).",
		}, []string{"project", "tool", "outcome"}),
		callTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "berth_tool_call_duration_seconds",
			Help:    "Time to answer an MCP tool call, by project, tool and outcome.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"project", "tool", "outcome"}),
		attach: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "berth_attach_duration_seconds",
			Help:    "Time to answer POST /projects (attach), mounting the project when needed, by outcome.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"outcome"}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "berth_restart_recoveries_total",
			Help: "Projects mounted again after a broker restart (pinned projects remounted at start).",
		}),
	}
	m.sessions = map[string]*prometheus.CounterVec{
		SessionEvicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_session_evictions_total",
			Help: "Idle MCP sessions a project ended to admit a new one at mcp.max_sessions (or past the idle sessions it keeps without a limit).",
		}, []string{"project"}),
		SessionRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_session_refusals_total",
			Help: "New MCP sessions a project refused (503, or a JSON-RPC error to initialize) because every place was busy.",
		}, []string{"project"}),
		SessionTimedOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_session_timeouts_total",
			Help: "MCP sessions a project ended after session_timeout without a request.",
		}, []string{"project"}),
		SessionRestored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_session_restores_total",
			Help: "Streamable HTTP sessions a project connected again, under their id, after a broker restart.",
		}, []string{"project"}),
	}
	for _, c := range m.sessions {
		m.reg.MustRegister(c)
	}
	m.reg.MustRegister(m.calls, m.callTime, m.attach, m.restarts,
		&gauges{snap: snap},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "berth_build_info", Help: "Always 1; the version label is the broker's.",
			ConstLabels: prometheus.Labels{"version": version},
		}, func() float64 { return 1 }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// ToolCall records one answered tool call.
func (m *Metrics) ToolCall(project, tool, outcome string, d time.Duration) {
	m.calls.WithLabelValues(project, tool, outcome).Inc()
	m.callTime.WithLabelValues(project, tool, outcome).Observe(d.Seconds())
}

// Attach records one attach request.
func (m *Metrics) Attach(ok bool, d time.Duration) {
	m.attach.WithLabelValues(Outcome(ok)).Observe(d.Seconds())
}

// Outcome is the outcome label of a call or request that succeeded (ok) or not.
func Outcome(ok bool) string {
	if ok {
		return OutcomeOK
	}
	return OutcomeError
}

// SessionEvent counts one session event (SessionEvicted, ...) of project.
func (m *Metrics) SessionEvent(project, event string) {
	if c := m.sessions[event]; c != nil {
		c.WithLabelValues(project).Inc()
	}
}

// RestartRecovered counts a project mounted again after a broker restart.
func (m *Metrics) RestartRecovered() { m.restarts.Inc() }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// gauges reads the broker's state at scrape time.
type gauges struct{ snap func() Snapshot }

var (
	mountsDesc   = prometheus.NewDesc("berth_mounts", "Projects mounted now.", nil, nil)
	sessionsDesc = prometheus.NewDesc("berth_sessions", "Initialized MCP sessions now, by transport.", []string{"transport"}, nil)
	filesDesc    = prometheus.NewDesc("berth_index_files", "Files in a project's search index.", []string{"project"}, nil)
	chunksDesc   = prometheus.NewDesc("berth_index_chunks", "Sections in a project's search index.", []string{"project"}, nil)
)

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- mountsDesc
	ch <- sessionsDesc
	ch <- filesDesc
	ch <- chunksDesc
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	s := g.snap()
	ch <- prometheus.MustNewConstMetric(mountsDesc, prometheus.GaugeValue, float64(s.Mounts))
	for tr, n := range s.Sessions {
		ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(n), tr)
	}
	for _, ix := range s.Indexes {
		ch <- prometheus.MustNewConstMetric(filesDesc, prometheus.GaugeValue, float64(ix.Files), ix.Project)
		ch <- prometheus.MustNewConstMetric(chunksDesc, prometheus.GaugeValue, float64(ix.Chunks), ix.Project)
	}
}
