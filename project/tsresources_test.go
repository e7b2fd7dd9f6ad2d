package project

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/workflow"
)

// tsResourcesDir holds the TypeScript client script and its locked SDK.
const tsResourcesDir = "testdata/tsresources"

// serveHTTP serves e's server over streamable HTTP on a loopback port
// until the test ends, and returns its URL.
func serveHTTP(t *testing.T, e *Engine) string {
	t.Helper()
	return serveMCP(t, e.Server(), nil)
}

// serveOn serves srv on a loopback port until the test ends, and returns
// its /mcp URL.
func serveOn(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// TestTypeScriptClientSeesResourcesAndPrompts runs resources.mjs with the
// official TypeScript SDK against a project's server: it lists and reads
// the standards, subscribes to one, edits it and waits for
// notifications/resources/updated, adds a file and waits for
// list_changed, and lists and fetches the workflow prompt.
func TestTypeScriptClientSeesResourcesAndPrompts(t *testing.T) {
	node := brokertest.NodeModules(t, tsResourcesDir, filepath.Join("@modelcontextprotocol", "sdk"), "the TypeScript MCP SDK")
	root := t.TempDir()
	std := filepath.Join(root, ".praxis-os", "standards")
	writeFile(t, filepath.Join(std, "a.md"), "# A\n\nFirst version.\n")
	writeFile(t, filepath.Join(std, "b.md"), "# B\n\nB text.\n")
	if err := os.CopyFS(filepath.Join(root, ".praxis-os", "workflows"), workflow.ExampleWorkflows()); err != nil {
		t.Fatal(err)
	}
	e := openEngine(t, root)
	// The catalog publishes the files once the first indexing is done.
	brokertest.Eventually(t, "the index to be ready", func() bool { st, _ := e.IndexStatus(); return st.State == "ready" })
	url := serveHTTP(t, e)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	script, _ := filepath.Abs(filepath.Join(tsResourcesDir, "resources.mjs"))
	cmd := exec.CommandContext(ctx, node, script, url, std)
	cmd.Dir = tsResourcesDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node resources.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var got struct {
		Capabilities struct {
			Resources struct{ Subscribe, ListChanged bool }
			Prompts   struct{ ListChanged bool }
		}
		Resources      []string
		FirstRead      string
		SubscribeError string
		UpdatedURI     string
		WantURI        string
		SecondRead     string
		ListedAfter    []string
		Prompts        []struct {
			Name      string
			Arguments []struct {
				Name     string
				Required bool
			}
		}
		PromptText string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, out)
	}
	if !got.Capabilities.Resources.Subscribe || !got.Capabilities.Resources.ListChanged || !got.Capabilities.Prompts.ListChanged {
		t.Errorf("capabilities: %+v", got.Capabilities)
	}
	if !slices.Contains(got.Resources, ".praxis-os/standards/a.md") || !slices.Contains(got.Resources, ".praxis-os/standards/b.md") ||
		!slices.Contains(got.Resources, ".praxis-os/workflows/bug_fix_v1/phases/1/phase.md") {
		t.Errorf("resources: %v", got.Resources)
	}
	if !strings.Contains(got.FirstRead, "First version.") || !strings.Contains(got.SecondRead, "Edited by the TypeScript client.") {
		t.Errorf("reads before and after the edit: %q, %q", got.FirstRead, got.SecondRead)
	}
	if got.UpdatedURI != got.WantURI || got.WantURI == "" {
		t.Errorf("resources/updated named %q, want %q", got.UpdatedURI, got.WantURI)
	}
	if !strings.Contains(got.SubscribeError, "not found") {
		t.Errorf("subscribing to a file that is no standard: error %q", got.SubscribeError)
	}
	if !slices.Contains(got.ListedAfter, ".praxis-os/standards/c.md") {
		t.Errorf("after adding c.md: %v", got.ListedAfter)
	}
	if len(got.Prompts) != 1 || got.Prompts[0].Name != "bug_fix_v1" || len(got.Prompts[0].Arguments) != 1 ||
		got.Prompts[0].Arguments[0].Name != "target_file" || !got.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts: %+v", got.Prompts)
	}
	if !strings.HasPrefix(got.PromptText, "Started workflow bug_fix_v1 on src/app.go: session ") {
		t.Errorf("prompt text: %q", got.PromptText)
	}
}
