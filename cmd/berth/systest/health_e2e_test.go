package systest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GET /health on a project's port answers with that project's own facts
// only, as the seed's and praxis-os's checks expect of an MCP port.
func TestProjectPortHealth(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	rootA := brokertest.Project(t, "healthy", standards)
	rootB := brokertest.Project(t, "neighbour", nil)
	a := b.Attach(t, rootA)
	nb := b.Attach(t, rootB)

	var h struct {
		Status  string `json:"status"`
		Project struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"project"`
		Index struct {
			State string `json:"state"`
			Files int    `json:"files"`
		} `json:"index"`
		UptimeSeconds *float64 `json:"uptime_seconds"`
	}
	var body string
	brokertest.Eventually(t, "the index is ready on /health", func() bool {
		r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", a.Port))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET /health: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), raw)
		}
		body = string(raw)
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatal(err)
		}
		return h.Index.State == "ready"
	})
	if h.Status != "ok" || h.Project.ID != a.ID || h.Project.Name != "healthy" || h.Index.Files != len(standards) || h.UptimeSeconds == nil {
		t.Fatalf("GET /health: %s", body)
	}
	for _, secret := range []string{nb.ID, rootB, rootA, b.Home, fmt.Sprint(b.PID())} {
		if strings.Contains(body, secret) {
			t.Errorf("/health shows %q, which another project could use: %s", secret, body)
		}
	}
	// The port's guards hold for it too.
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/health", a.Port), nil)
	req.Host = "attacker.example"
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("/health with a foreign Host: %d, want 403", r.StatusCode)
	}
}

// get_server_info answers in praxis-os's shape over the IDE's shim: the
// state file's transport, the HTTP endpoint, the tools counted.
func TestServerInfoPraxisShapeOverTheShim(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "shaped", nil)
	tr, _ := shimTransport(t, b.Home, root)
	s := connectMCP(t, ctx, tr)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_server_info: %v %+v", err, res)
	}
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := api.ReadStateFile(root)
	if err != nil {
		t.Fatal(err)
	}
	info := res.StructuredContent
	for _, want := range []struct {
		path []string
		v    any
	}{
		{[]string{"server", "transport"}, "stdio"},
		{[]string{"server", "transport_mode"}, "dual"},
		{[]string{"server", "url"}, *sf.URL},
		{[]string{"project", "praxis_os_path"}, root + "/.praxis-os"},
		{[]string{"capabilities", "tools_available"}, float64(len(tools.Tools))},
		{[]string{"capabilities", "dual_transport"}, true},
		{[]string{"capabilities", "http_transport"}, true},
		{[]string{"capabilities", "rag_enabled"}, true},
		{[]string{"capabilities", "workflow_enabled"}, true},
		{[]string{"capabilities", "browser_enabled"}, false},
	} {
		if got := dig(info, want.path...); got != want.v {
			t.Errorf("%s = %#v, want %#v", strings.Join(want.path, "."), got, want.v)
		}
	}
}
