package systest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shimIn runs berth-shim as an IDE would, in dir, with no --project and
// none of the variables that name one: only env adds any.
func shimIn(t *testing.T, home, dir string, env ...string) (*mcp.CommandTransport, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(brokertest.Shim(t), "--log-level", "debug")
	brokertest.DieWithTest(cmd)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PROJECT_ROOT=") && !strings.HasPrefix(kv, "AGENT_OS_BASE_PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "BERTH_HOME="+home, "BERTH_LISTEN=", "BERTH_MOUNT_GRACE=300ms"), env...)
	cmd.Stderr = newLogWriter(t, "shim")
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, cmd
}

// connectErr is the error of a client's connect (its initialize) through tr.
func connectErr(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) error {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	s, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, opts).Connect(ctx, tr, nil)
	if err == nil {
		s.Close()
	}
	return err
}

// A shim that cannot serve answers the IDE's requests with the reason and
// the fix, then exits: no project anywhere, a client without roots and
// the home directory as the working directory (never served as a
// folder), a project whose config does not load (initialize fails), roots
// that are in no project and are the home directory (initialize was
// answered by the shim: the next request fails).
func TestShimThatCannotServeAnswersInitialize(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	broken := brokertest.Project(t, "broken", map[string]string{".praxis-os/config.yaml": "mcp: [unclosed\n"})
	userHome, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		env      []string
		roots    []string // nil: the client declares no roots
		mentions []string
	}{
		{"no project, no roots, in the home directory", nil, nil, []string{"no project found", "--project DIR", "shares no workspace folders", userHome + " is your home directory"}},
		{"a project that cannot be mounted", []string{"PROJECT_ROOT=" + broken}, nil, []string{"config.yaml:1:", "fix the YAML"}},
		{"roots that are the home directory", nil, []string{userHome}, []string{"no project found", "none of the IDE's workspace folders", "your home directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, cmd := shimIn(t, b.Home, userHome, append([]string{"HOME=" + userHome}, tc.env...)...)
			opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
			if tc.roots != nil {
				opts = nil // the SDK's default: roots
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, opts)
			for _, r := range tc.roots {
				c.AddRoots(&mcp.Root{URI: "file://" + r})
			}
			ctx := testCtx(t, 30*time.Second)
			s, err := c.Connect(ctx, tr, nil)
			if err == nil {
				// The shim answered initialize itself; the first request gets the reason.
				_, err = s.ListTools(ctx, nil)
				s.Close()
			}
			if err == nil {
				t.Fatal("the shim served")
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			// The client closed the transport, which waited for the shim.
			if cmd.ProcessState == nil {
				_ = brokertest.WaitExit(cmd, 10*time.Second)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("the shim exited with %d after refusing, want 1", code)
			}
		})
	}
}

// With no flag, variable or working directory naming a project, the shim
// serves the first of the IDE's roots that holds one.
func TestShimServesTheProjectOfTheClientsRoots(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	ctx := testCtx(t, 60*time.Second)
	root := brokertest.Project(t, "rooted", standards)
	tr, _ := shimIn(t, b.Home, t.TempDir())
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file://" + t.TempDir(), Name: "docs"}, &mcp.Root{URI: "file://" + root, Name: "rooted"})
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info := getServerInfo(t, ctx, s)
	if info.Project.Root != root || info.Server.Transport != "stdio" || info.Server.PID != b.PID() {
		t.Fatalf("get_server_info through a roots-found shim: %+v", info)
	}
	if hits := search(t, ctx, s, "closing files"); !hasFile(hits, ".praxis-os/standards/errors.md") {
		t.Fatalf("search: %+v", hits)
	}
	// The shim's own answer to initialize says what the broker's does (to
	// an initialize: a client of the stateless protocol is sent there).
	c2 := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	direct, err := c2.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.Attach(t, root).URL}, &mcp.ClientSessionOptions{ProtocolVersion: s.InitializeResult().ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	got, _ := json.Marshal(s.InitializeResult().Capabilities)
	want, _ := json.Marshal(direct.InitializeResult().Capabilities)
	if string(got) != string(want) {
		t.Errorf("the shim answered initialize with capabilities %s, the project's server with %s", got, want)
	}
	if v := s.InitializeResult().ProtocolVersion; v != direct.InitializeResult().ProtocolVersion {
		t.Errorf("protocol version %s through the shim, %s direct", v, direct.InitializeResult().ProtocolVersion)
	}
}

// AGENT_OS_BASE_PATH, praxis-os's variable, names the project: its root
// or its .praxis-os folder.
func TestShimReadsAgentOSBasePath(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "based", nil)
	for _, v := range []string{root, filepath.Join(root, ".praxis-os")} {
		ctx := testCtx(t, 30*time.Second)
		tr, _ := shimIn(t, b.Home, t.TempDir(), "AGENT_OS_BASE_PATH="+v)
		s := connectMCP(t, ctx, tr)
		if got := getServerInfo(t, ctx, s).Project.Root; got != root {
			t.Fatalf("AGENT_OS_BASE_PATH=%s serves %s", v, got)
		}
		s.Close()
	}
}

// A flag the shim does not know is answered too, when an IDE started it.
func TestShimWithABadFlagAnswersInitialize(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(brokertest.Shim(t), "--projet", "/x")
	cmd.Stderr = newLogWriter(t, "shim")
	err := connectErr(t, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err == nil || !strings.Contains(err.Error(), "projet") || !strings.Contains(err.Error(), "usage: berth-shim") {
		t.Fatalf("initialize of a shim with a bad flag: %v", err)
	}
}

// --help prints the usage on stderr and exits 0 without answering on
// stdout, even when no person runs it (stdin is a pipe, not a terminal):
// the shim tells --help from a bad flag by shim.ErrHelp, not by its text.
func TestShimHelpIsNotRefused(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(brokertest.Shim(t), "--help")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("berth-shim --help: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "usage: berth-shim") || stdout.Len() != 0 {
		t.Fatalf("berth-shim --help: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
