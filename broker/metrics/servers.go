package metrics

import (
	"github.com/berth-dev/berth/api"
	"github.com/prometheus/client_golang/prometheus"
)

// Server is one hosted MCP server of one project, its status as the
// broker reports it everywhere, read at scrape time.
type Server struct {
	Project string
	api.ServerStatus
}

var (
	serverUpDesc = prometheus.NewDesc("berth_hosted_server_up",
		"1 when the hosted MCP server is running, else 0, by project and server.", []string{"project", "server"}, nil)
	serverCallsDesc = prometheus.NewDesc("berth_hosted_server_calls_total",
		"Requests (tool calls, prompts, resource reads) a project forwarded to a hosted MCP server.", []string{"project", "server"}, nil)
	serverErrorsDesc = prometheus.NewDesc("berth_hosted_server_errors_total",
		"Forwarded requests that failed (the server's own errors, timeouts, crashes), by project and server.", []string{"project", "server"}, nil)
	serverRestartsDesc = prometheus.NewDesc("berth_hosted_server_restarts_total",
		"Restarts of a hosted MCP server's process after it exited or crashed, by project and server.", []string{"project", "server"}, nil)
	serverRSSDesc = prometheus.NewDesc("berth_hosted_server_rss_bytes",
		"Resident memory of a hosted MCP server's process and its children, by project and server.", []string{"project", "server"}, nil)
)

// Servers adds the hosted servers' metrics; snap is called on every scrape.
func (m *Metrics) Servers(snap func() []Server) {
	m.reg.MustRegister(&servers{snap: snap})
}

type servers struct{ snap func() []Server }

func (s *servers) Describe(ch chan<- *prometheus.Desc) {
	ch <- serverUpDesc
	ch <- serverCallsDesc
	ch <- serverErrorsDesc
	ch <- serverRestartsDesc
	ch <- serverRSSDesc
}

func (s *servers) Collect(ch chan<- prometheus.Metric) {
	for _, sv := range s.snap() {
		up := 0.0
		if sv.State == api.ServerRunning {
			up = 1
		}
		labels := []string{sv.Project, sv.Name}
		ch <- prometheus.MustNewConstMetric(serverUpDesc, prometheus.GaugeValue, up, labels...)
		ch <- prometheus.MustNewConstMetric(serverCallsDesc, prometheus.CounterValue, float64(sv.Calls), labels...)
		ch <- prometheus.MustNewConstMetric(serverErrorsDesc, prometheus.CounterValue, float64(sv.Errors), labels...)
		ch <- prometheus.MustNewConstMetric(serverRestartsDesc, prometheus.CounterValue, float64(sv.Restarts), labels...)
		ch <- prometheus.MustNewConstMetric(serverRSSDesc, prometheus.GaugeValue, float64(sv.RSSBytes), labels...)
	}
}
