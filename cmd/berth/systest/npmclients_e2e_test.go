package systest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// npmClientsDir holds the MCP Inspector and mcp-remote, locked by its
// package-lock.json.
const npmClientsDir = "testdata/npmclients"

// Entry points of the two clients, in npmClientsDir.
var (
	inspectorRuns = "inspector-runs.mjs" // the Inspector's CLI, run several times in one process
	mcpRemoteBin  = filepath.Join("node_modules", "mcp-remote", "dist", "proxy.js")
)

// needNPMClients returns the node binary, installing npmClientsDir's
// modules with brokertest.NodeModules when they are missing.
func needNPMClients(t *testing.T) string {
	t.Helper()
	brokertest.NodeModules(t, npmClientsDir, filepath.Join("@modelcontextprotocol", "inspector"), "the MCP Inspector")
	return brokertest.NodeModules(t, npmClientsDir, "mcp-remote", "mcp-remote")
}

// TestThirdPartyClientsOutnumberMaxSessionsOnTheDefaultConfig runs the
// MCP Inspector's CLI (as its launcher runs it, every run in one Node
// process) one time more than the default config's mcp.max_sessions
// against a project with that config, and mcp-remote (a process per run,
// driven as an IDE drives it, over stdio) one time more than a second
// project's max_sessions of 2: each mcp-remote run is a Node start of
// seconds of CPU, and the rule at the limit is the same for every limit.
// Neither client ends its session with DELETE, so each leaves more
// sessions behind than its project may hold at once; every run succeeds.
func TestThirdPartyClientsOutnumberMaxSessionsOnTheDefaultConfig(t *testing.T) {
	t.Parallel()
	node := needNPMClients(t)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--log-level", "info"}})
	root := brokertest.Project(t, "thirdparty", nil)
	p := b.Attach(t, root)
	env := append(os.Environ(), "HOME="+t.TempDir()) // both keep files under HOME
	// The limit plus one: the run after the project's places are all
	// taken by sessions no client will end. No more than the rule needs.
	const runs = config.DefaultMaxSessions + 1

	t.Run("inspector-cli", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t, 5*time.Minute)
		// The runs in one Node process, each a run of the CLI with its own
		// session (testdata/npmclients/inspector-runs.mjs).
		cmd := exec.CommandContext(ctx, node, inspectorRuns, strconv.Itoa(runs), "--cli", p.URL, "--transport", "http",
			"--method", "tools/call", "--tool-name", "get_server_info")
		cmd.Dir, cmd.Env = npmClientsDir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		outs := strings.Split(string(out), "=== run ")[1:]
		for i, o := range outs {
			if !strings.Contains(o, root) || !strings.Contains(o, `"transport": "http"`) {
				t.Fatalf("run %d of the Inspector CLI: %v\nstdout: %.2000s\nstderr: %.2000s", i, err, o, stderr.String())
			}
		}
		if err != nil || len(outs) != runs {
			t.Fatalf("%d runs of the Inspector CLI, want %d: %v\nstdout: %.2000s\nstderr: %.2000s", len(outs), runs, err, out, stderr.String())
		}
	})
	t.Run("mcp-remote", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t, 5*time.Minute)
		const limit = 2
		root := brokertest.Project(t, "thirdparty-remote", map[string]string{
			filepath.Join(api.ProjectDir, "config.yaml"): fmt.Sprintf("mcp:\n  max_sessions: %d\n", limit),
		})
		p := b.Attach(t, root)
		for i := range limit + 1 {
			cmd := exec.CommandContext(ctx, node, mcpRemoteBin, p.URL)
			cmd.Dir, cmd.Env = npmClientsDir, env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
			// As an IDE speaks: initialize at 2025-11-25.
			s, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("run %d of mcp-remote: connect: %v\nstderr: %.2000s", i, err, stderr.String())
			}
			info := getServerInfo(t, ctx, s)
			s.Close()
			if info.Project.Root != root || info.Server.Transport != "http" {
				t.Fatalf("run %d of mcp-remote: get_server_info %+v", i, info)
			}
		}
		// Every run left its session: the last found the places full and
		// ended the oldest to take its place.
		if got, err := b.Client.Project(ctx, p.ID); err != nil || got.Sessions != limit {
			t.Fatalf("after %d runs of mcp-remote: %d sessions (%v), want the limit %d", limit+1, got.Sessions, err, limit)
		}
	})
}
