package systest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// get fetches path from the broker's control API over c.
func get(t *testing.T, ctx context.Context, c *api.Client, path string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	r, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer r.Body.Close()
	if r.Header.Get("Content-Type") == "text/event-stream" {
		// Read only the first event: the stream does not end by itself.
		ev, err := readEvent(bufio.NewReader(r.Body))
		if err != nil {
			t.Fatalf("GET %s: first event: %v", path, err)
		}
		return r.StatusCode, ev
	}
	body, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(body)
}

// readEvent reads one Server-Sent Event and returns its data.
func readEvent(br *bufio.Reader) (string, error) {
	var data strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && data.Len() > 0:
			return data.String(), nil
		case strings.HasPrefix(line, "data: "):
			data.WriteString(strings.TrimPrefix(line, "data: "))
		}
	}
}

func TestControlAPIOnTCPRefusesForeignOriginAndHost(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	ctl, _ := brokertest.PortRange(t, 1)
	addr := fmt.Sprintf("127.0.0.1:%d", ctl)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--listen", addr}})
	p := b.Attach(t, brokertest.Project(t, "guarded", standards))
	tcp := api.NewTCPClient(addr)
	paths := []string{"/", "/assets/app.js", "/events", "/metrics", "/health", "/projects", "/projects/" + p.ID + "/search?q=errors"}
	for _, path := range paths {
		if code, body := get(t, ctx, tcp, path, map[string]string{"Origin": "http://127.0.0.1:" + fmt.Sprint(ctl)}); code != http.StatusOK {
			t.Errorf("%s with the dashboard's own origin: %d %s", path, code, body)
		}
		for _, h := range []map[string]string{
			{"Origin": "http://evil.example"},
			{"Origin": "null"},
			{"Host": "evil.example:" + fmt.Sprint(ctl)},
		} {
			code, body := get(t, ctx, tcp, path, h)
			if code != http.StatusForbidden || !strings.Contains(body, "not allowed") {
				t.Errorf("%s with %v: %d %s, want 403 naming what is not allowed", path, h, code, body)
			}
		}
	}
	// The unix socket needs no Host check, and serves the same routes.
	if code, _ := get(t, ctx, b.Client, "/metrics", nil); code != http.StatusOK {
		t.Errorf("/metrics on the socket: %d", code)
	}
}

// scrape fetches /metrics over the socket and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, ctx context.Context, b *brokertest.Broker) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, ctx, b.Client, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse as the Prometheus text format: %v\n%s", err, body)
	}
	return fams
}

// metricValue is the value of the sample of family name whose labels
// include want; ok is false when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetricsCountToolCalls(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	b := brokertest.StartBroker(t, brokertest.Options{})
	a := b.Attach(t, brokertest.Project(t, "alpha", standards))
	b.Attach(t, brokertest.Project(t, "beta", nil))
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: a.URL})

	before := scrape(t, ctx, b)
	if v, ok := metricValue(before, "berth_tool_calls_total", map[string]string{"project": a.ID, "tool": "search_standards"}); ok {
		t.Fatalf("a search counted before any was made: %v", v)
	}
	search(t, ctx, s, "closing files")
	if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "search_standards", Arguments: map[string]any{"query": ""}}); err != nil || !res.IsError {
		t.Fatalf("empty query: %v %+v", err, res)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Fatal("an unknown tool answered")
	}

	after := scrape(t, ctx, b)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"berth_tool_calls_total", map[string]string{"project": a.ID, "tool": "search_standards", "outcome": "ok"}, 1},
		{"berth_tool_calls_total", map[string]string{"project": a.ID, "tool": "search_standards", "outcome": "error"}, 1},
		{"berth_tool_calls_total", map[string]string{"project": a.ID, "tool": "unknown", "outcome": "error"}, 1},
		{"berth_tool_call_duration_seconds", map[string]string{"project": a.ID, "tool": "search_standards", "outcome": "ok"}, 1},
		{"berth_mounts", nil, 2},
		{"berth_sessions", map[string]string{"transport": "http"}, 1},
		{"berth_sessions", map[string]string{"transport": "stdio"}, 0},
		{"berth_index_files", map[string]string{"project": a.ID}, 3},
		{"berth_attach_duration_seconds", map[string]string{"outcome": "ok"}, 2},
		{"berth_restart_recoveries_total", nil, 0},
	} {
		got, ok := metricValue(after, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if v, _ := metricValue(after, "berth_index_chunks", map[string]string{"project": a.ID}); v < 3 {
		t.Errorf("berth_index_chunks for %s = %v, want at least 3", a.ID, v)
	}

	// A restart remounts the pinned projects: each counts as recovered.
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}
	b2 := brokertest.StartBroker(t, brokertest.Options{Home: b.Home})
	brokertest.Eventually(t, "pinned projects remounted", func() bool {
		v, _ := metricValue(scrape(t, ctx, b2), "berth_restart_recoveries_total", nil)
		return v == 2
	})
}

func TestEventsStreamFollowsTheBrokerAndEndsOnShutdown(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	b := brokertest.StartBroker(t, brokertest.Options{})
	p := b.Attach(t, brokertest.Project(t, "streamed", standards))

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.Client.Base+"/events", nil)
	r, err := b.Client.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if ct := r.Header.Get("Content-Type"); r.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("/events: %d %s", r.StatusCode, ct)
	}
	br := bufio.NewReader(r.Body)
	next := func() api.Dashboard {
		t.Helper()
		data, err := readEvent(br)
		if err != nil {
			t.Fatalf("read event: %v", err)
		}
		var d api.Dashboard
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			t.Fatalf("event data: %v\n%s", err, data)
		}
		return d
	}
	d := next()
	if len(d.Projects) != 1 || d.Projects[0].ID != p.ID || d.Projects[0].Port != p.Port || d.Health.PID != b.PID() || d.Health.RSSBytes == 0 {
		t.Fatalf("first snapshot: %+v", d)
	}
	if len(d.Logs) == 0 {
		t.Fatal("first snapshot has no log lines")
	}

	// A tool call is pushed without asking.
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: p.URL})
	search(t, ctx, s, "wrapping")
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("the tool call never reached the stream")
		}
		d = next()
		if calls := d.Projects[0].Calls; len(calls) > 0 {
			if calls[0].Tool != "search_standards" || !calls[0].OK || calls[0].Transport != "http" {
				t.Fatalf("pushed call: %+v", calls[0])
			}
			break
		}
	}

	// Shutdown ends the stream cleanly and does not wait for it.
	stopped := make(chan error, 1)
	go func() { stopped <- b.Stop(t) }()
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Errorf("the stream ended with an error, not cleanly: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("broker stop with a dashboard connected: %v", err)
	}
}

func recentLogs(t *testing.T, ctx context.Context, s *mcp.ClientSession, args map[string]any) ([]api.LogLine, string) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_recent_logs", Arguments: args})
	if err != nil {
		t.Fatalf("get_recent_logs %v: %v", args, err)
	}
	if res.IsError {
		return nil, brokertest.ResultText(res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Project string        `json:"project"`
		Records []api.LogLine `json:"records"`
		Count   int           `json:"count"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.Count != len(out.Records) {
		t.Fatalf("count %d for %d records", out.Count, len(out.Records))
	}
	return out.Records, ""
}

func TestGetRecentLogsIsPerProject(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	b := brokertest.StartBroker(t, brokertest.Options{})
	// alpha warns at mount: it has more tools than its max_tools_warning.
	alphaFiles := map[string]string{".praxis-os/config.yaml": "mcp:\n  max_tools_warning: 1\n"}
	for k, v := range standards {
		alphaFiles[k] = v
	}
	alphaRoot := brokertest.Project(t, "alpha", alphaFiles)
	betaRoot := brokertest.Project(t, "beta", standards)
	a, bb := b.Attach(t, alphaRoot), b.Attach(t, betaRoot)
	sa := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: a.URL})
	sb := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: bb.URL})
	search(t, ctx, sa, "closing files")
	search(t, ctx, sb, "owners")
	search(t, ctx, sb, "tools")

	for _, c := range []struct {
		s           *mcp.ClientSession
		self, other api.AttachResponse
	}{{sa, a, bb}, {sb, bb, a}} {
		recs, errText := recentLogs(t, ctx, c.s, map[string]any{"limit": 1000})
		if errText != "" {
			t.Fatal(errText)
		}
		var calls int
		for _, r := range recs {
			raw, _ := json.Marshal(r)
			if r.Project != c.self.ID || strings.Contains(string(raw), c.other.ID) || strings.Contains(string(raw), c.other.Root) {
				t.Errorf("%s's logs hold another project's record: %s", c.self.ID, raw)
			}
			if r.Message == "tool call" && r.Attrs["tool"] == "search_standards" {
				calls++
			}
		}
		if len(recs) == 0 || calls == 0 {
			t.Errorf("%s: %d records, %d search calls logged (log level debug logs each call)", c.self.ID, len(recs), calls)
		}
	}

	// level, limit and since filter.
	warns, _ := recentLogs(t, ctx, sa, map[string]any{"level": "warn"})
	if len(warns) == 0 || !strings.Contains(warns[0].Message, "max_tools_warning") {
		t.Errorf("level warn: %+v, want the max_tools_warning warning", warns)
	}
	for _, r := range warns {
		if r.Level != "WARN" && r.Level != "ERROR" {
			t.Errorf("level warn returned a %s record", r.Level)
		}
	}
	all, _ := recentLogs(t, ctx, sa, map[string]any{"limit": 1000})
	two, _ := recentLogs(t, ctx, sa, map[string]any{"limit": 2})
	if len(two) != 2 || len(all) < 3 || !two[0].Time.Equal(all[len(all)-1].Time) && !two[1].Time.After(all[len(all)-3].Time) {
		t.Errorf("limit 2 should be the 2 newest, oldest first: %+v", two)
	}
	if recs, _ := recentLogs(t, ctx, sa, map[string]any{"since": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}); len(recs) != 0 {
		t.Errorf("since an hour from now: %d records", len(recs))
	}
	if recs, _ := recentLogs(t, ctx, sa, map[string]any{"since": "1h"}); len(recs) == 0 {
		t.Error("since 1h: no records")
	}

	// Bad arguments are tool errors naming the fix.
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"limit": 0}, "use 1 to 1000"},
		{map[string]any{"limit": 1001}, "use 1 to 1000"},
		{map[string]any{"level": "verbose"}, "use debug, info, warn or error"},
		{map[string]any{"since": "yesterday"}, "RFC 3339"},
		{map[string]any{"since": "-5m"}, "positive duration"},
		{map[string]any{"project": bb.ID}, "project"},
	} {
		_, errText := recentLogs(t, ctx, sa, c.args)
		if !strings.Contains(errText, c.want) {
			t.Errorf("get_recent_logs %v: error %q, want one containing %q", c.args, errText, c.want)
		}
	}
}

func TestToolCallLoggingFollowsLogLevel(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	home := brokertest.Home(t)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("log_level: info\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start, end := brokertest.PortRange(t, 5)
	b := brokertest.StartBroker(t, brokertest.Options{Home: home, Bare: true, Args: []string{
		"--listen", "", "--ports-start", fmt.Sprint(start), "--ports-end", fmt.Sprint(end)}})
	p := b.Attach(t, brokertest.Project(t, "quiet", standards))
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: p.URL})
	search(t, ctx, s, "wrapping")
	recs, errText := recentLogs(t, ctx, s, nil)
	if errText != "" {
		t.Fatal(errText)
	}
	for _, r := range recs {
		if r.Level == "DEBUG" || r.Message == "tool call" {
			t.Errorf("log_level info kept a debug record: %+v", r)
		}
	}
	if len(recs) == 0 {
		t.Error("no records at all at info")
	}
	if err := b.Stop(t); err != nil {
		t.Fatal(err)
	}
	logFile, _ := os.ReadFile(filepath.Join(home, api.LogName))
	if strings.Contains(string(logFile), "tool call") {
		t.Error("log_level info wrote tool calls to berth.log")
	}

	// --log-level debug on the command line beats the file.
	b2 := brokertest.StartBroker(t, brokertest.Options{Home: home, Bare: true, Args: []string{
		"--listen", "", "--ports-start", fmt.Sprint(start), "--ports-end", fmt.Sprint(end), "--log-level", "debug"}})
	p2 := b2.Attach(t, brokertest.Project(t, "loud", standards))
	s2 := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: p2.URL})
	search(t, ctx, s2, "wrapping")
	recs, _ = recentLogs(t, ctx, s2, map[string]any{"level": "debug"})
	found := false
	for _, r := range recs {
		if r.Message == "tool call" && r.Attrs["tool"] == "search_standards" && r.Attrs["outcome"] == "ok" && r.Attrs["transport"] == "http" && r.Attrs["duration"] != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("--log-level debug: no tool call record in %+v", recs)
	}
}

func TestCallWithoutArgumentsDoesNotCrashTheBroker(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 60*time.Second)
	b := brokertest.StartBroker(t, brokertest.Options{})
	p := b.Attach(t, brokertest.Project(t, "bare", standards))
	s := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: p.URL})
	for _, tool := range []string{"search_standards", "get_recent_logs", "get_server_info"} {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		if err != nil {
			t.Fatalf("%s without arguments: %v\n%s", tool, err, b.Stderr())
		}
		if tool == "search_standards" && (!res.IsError || !strings.Contains(brokertest.ResultText(res), "query")) {
			t.Errorf("search_standards without arguments: %s", brokertest.ResultText(res))
		}
		if tool != "search_standards" && res.IsError {
			t.Errorf("%s without arguments: %s", tool, brokertest.ResultText(res))
		}
	}
	if _, err := b.Client.Health(ctx); err != nil {
		t.Fatalf("broker gone after calls without arguments: %v", err)
	}
}
