package workflow_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/workflow/lambdaproc"
	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets this test binary serve as the child that runs gate
// lambdas (the engine tests' testLambdas), then runs the tests.
func TestMain(m *testing.M) {
	lambdaproc.RunIfChild()
	code := m.Run()
	brokertest.Cleanup()
	os.Exit(code)
}

// connectProject opens a go-sdk client session on the project's own port.
func connectProject(t *testing.T, att api.AttachResponse) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "compat-e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: att.URL}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", att.URL, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPraxisFormatWorkflowsThroughBerthServe runs the praxis-format
// workflows through a real `berth serve`: `berth workflows` lists the five
// ready (with the warnings of the ready ones), each starts and walks its
// first two phases over streamable HTTP, and a feature_delivery_v1 session
// survives a kill -9 of the broker with its generated phases and finishes.
func TestPraxisFormatWorkflowsThroughBerthServe(t *testing.T) {
	t.Parallel() // its own project and store (and broker): beside the other tests marked so
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "praxis-compat", map[string]string{
		".praxis-os/config.yaml": "mcp:\n  enabled_tool_groups: [rag, workflow, pos]\n",
	})
	workflowtest.Project(t, root)

	cmd := exec.Command(brokertest.Berth(t), "workflows", "--project", root)
	cmd.Env = append(os.Environ(), api.HomeEnv+"="+b.Home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("berth workflows: %v\n%s", err, out)
	}
	for _, wf := range workflowtest.Workflows {
		if !strings.Contains(string(out), wf+" ") || strings.Count(string(out), " ready ") != 5 {
			t.Fatalf("berth workflows does not list %s as one of five ready:\n%s", wf, out)
		}
	}
	if !strings.Contains(string(out), "workflow_scaffold_v1 is ready, with warnings:") || !strings.Contains(string(out), "phases/4/ is missing") {
		t.Fatalf("berth workflows does not show the warnings of workflow_scaffold_v1:\n%s", out)
	}

	cs := connectProject(t, b.Attach(t, root))
	c := &workflowtest.Client{TB: t, CS: cs}
	workflowtest.ListsReady(c)
	for _, wf := range workflowtest.Workflows {
		workflowtest.WalkFirstPhases(c, wf, "e2e/"+wf, workflowtest.Options[wf], true)
		workflowtest.WalkFirstPhases(&workflowtest.Client{TB: t, CS: cs, POS: true}, wf, "e2e/pos-"+wf, workflowtest.Options[wf], false)
	}

	start := c.Must("start_workflow", map[string]any{"workflow_type": "feature_delivery_v1", "target_file": "e2e/restart",
		"options": map[string]any{"spec_path": workflowtest.SpecPath}})
	sid := start["session_id"].(string)
	c.Must("complete_phase", map[string]any{"session_id": sid, "phase": 0, "evidence": workflowtest.Evidence(workflowtest.Dig(start, "phase", "gate").(map[string]any), true)})

	b.Kill(t)
	b = brokertest.StartBroker(t, brokertest.Options{Home: b.Home})
	c = &workflowtest.Client{TB: t, CS: connectProject(t, b.Attach(t, root))}
	state := c.Must("get_workflow_state", map[string]any{"session_id": sid})
	if workflowtest.Num(state["current_phase"]) != 1 || len(state["phases"].([]any)) != 3 || workflowtest.Dig(state, "phases", 2, "phase_name") != "HTTP API" {
		t.Fatalf("after kill -9 and restart: %v", state)
	}
	for n := 1; n <= 2; n++ {
		cur := c.Must("get_current_phase", map[string]any{"session_id": sid})
		gate := workflowtest.Dig(cur, "phase", "gate").(map[string]any)
		res := c.Must("complete_phase", map[string]any{"session_id": sid, "phase": n, "evidence": workflowtest.Evidence(gate, true)})
		if res["checkpoint_passed"] != true || (n == 2) != (res["workflow_complete"] == true) {
			t.Fatalf("phase %d after restart: %v", n, res)
		}
	}
	workflowtest.WalkSpecExecution(c, "e2e/spec")
}
