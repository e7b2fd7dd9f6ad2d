package systest

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExampleServerHostedOnceForWindowAndSubAgent: the notes server
// (`berth example-server`) declared in a project and approved is one
// process for a window through berth-shim and a sub-agent over HTTP: a
// note the window adds, the sub-agent finds and reads as a resource, both
// answered by the pid `berth servers` shows. Killed, it is started again
// with its notes (kept in the project's folder).
func TestExampleServerHostedOnceForWindowAndSubAgent(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 2*time.Minute)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "notes", map[string]string{
		".praxis-os/config.yaml": fmt.Sprintf("servers:\n  notes:\n    command: %q\n    args: [example-server, --dir, notes]\n", brokertest.Berth(t)),
	})
	if out, code := berthCmd(t, b.Home, "servers", "approve", root); code != 0 {
		t.Fatalf("berth servers approve: %d\n%s", code, out)
	}
	tr, _ := shimTransport(t, b.Home, root)
	ide := connectMCP(t, ctx, tr)
	added := callOK(t, ctx, ide, "notes__add_note", map[string]any{"title": "Deploy steps", "body": "Build, tag, ship.", "tags": []string{"ops"}})

	sf, err := api.ReadStateFile(root)
	if err != nil || sf.URL == nil {
		t.Fatalf("state file: %+v %v", sf, err)
	}
	agent := connectMCP(t, ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL})
	found := callOK(t, ctx, agent, "notes__search_notes", map[string]any{"query": "tag ship"})
	if notes, _ := found["notes"].([]any); len(notes) != 1 || dig(notes[0], "uri") != "note://deploy-steps" {
		t.Fatalf("the sub-agent's search: %v", found)
	}
	res, err := agent.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://deploy-steps"})
	if err != nil || res.Contents[0].Text != "# Deploy steps\n\nBuild, tag, ship." {
		t.Fatalf("the sub-agent reads note://deploy-steps: %v %+v", err, res)
	}
	pid := serverStatus(t, ctx, b, root, "notes").PID
	if fmt.Sprint(added["server_pid"]) != fmt.Sprint(pid) || fmt.Sprint(found["server_pid"]) != fmt.Sprint(pid) {
		t.Fatalf("notes pid %d in berth servers; the window reached %v, the sub-agent %v", pid, added["server_pid"], found["server_pid"])
	}
	out, _ := berthCmd(t, b.Home, "servers", "--project", root)
	mustContain(t, out, "notes", "running", fmt.Sprint(pid))

	// Killed: started again, and the note is still there for both.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, "the notes server running again with a new pid", func() bool {
		s := serverStatus(t, ctx, b, root, "notes")
		return s.State == api.ServerRunning && s.PID != pid && s.PID > 0
	})
	list := callOK(t, ctx, ide, "notes__list_notes", nil)
	if notes, _ := list["notes"].([]any); len(notes) != 1 || fmt.Sprint(list["server_pid"]) == fmt.Sprint(pid) {
		t.Fatalf("after the restart: %v", list)
	}
}

// TestDemoShowsHosting: `berth demo` runs to the end and shows the notes
// server hosted once for the window and the sub-agent.
func TestDemoShowsHosting(t *testing.T) {
	t.Parallel()
	onDefaultPorts(t)
	cmd := exec.Command(brokertest.Berth(t), "demo")
	cmd.Env = userEnv(userHome(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("berth demo: %v\n%s", err, out)
	}
	mustContain(t, string(out), "approved notes: "+brokertest.Berth(t)+" example-server --dir notes",
		"IDE: notes__add_note -> note://release-checklist", "sub-agent: notes__search_notes", "the IDE's call and the sub-agent's both reached notes pid",
		"Demo finished: everything it started is stopped.")
	if strings.Contains(string(out), "node") || strings.Contains(string(out), "npx") {
		t.Errorf("the demo mentions Node:\n%s", out)
	}
}
