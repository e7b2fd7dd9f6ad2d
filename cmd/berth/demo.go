package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/shim"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed all:example
var exampleFS embed.FS

// demo runs Berth's main job on the built-in example project and prints
// what happens. Everything it starts, it stops; everything it writes is in
// temp directories it removes.
type demo struct {
	out   io.Writer
	start time.Time
	step  int
	exe   string
	home  string
	root  string
}

func runDemo(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageError{"takes no arguments"}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	d := &demo{out: os.Stdout, start: time.Now()}
	return d.run(ctx)
}

func (d *demo) say(format string, args ...any) {
	d.step++
	fmt.Fprintf(d.out, "\n[%d] %s  (+%.2fs)\n", d.step, fmt.Sprintf(format, args...), time.Since(d.start).Seconds())
}

func (d *demo) detail(format string, args ...any) {
	fmt.Fprintf(d.out, "    %s\n", fmt.Sprintf(format, args...))
}

func (d *demo) run(ctx context.Context) (err error) {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	d.exe = exe
	tmp, err := os.MkdirTemp("", "berth-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	d.home = filepath.Join(tmp, "home")
	d.root = filepath.Join(tmp, "example-project")
	if err := writeExample(d.root); err != nil {
		return err
	}
	if err := exampleWorkflows(d.root); err != nil {
		return err
	}
	if err := declareNotes(d.root, exe); err != nil {
		return err
	}
	d.root, _ = filepath.EvalSymlinks(d.root)

	d.say("Example project written to %s", d.root)
	d.detail("BERTH_HOME (socket, lock, database, logs): %s", d.home)

	d.say("Starting the broker (berth serve) and waiting for its readiness signal")
	client, err := shim.Connect(ctx, d.home, shim.Autostart{Binary: exe, Args: []string{"--listen", "", "--mount-grace", "2s"}})
	if err != nil {
		return err
	}
	h, err := client.Health(ctx)
	if err != nil {
		return err
	}
	d.detail("broker pid %d, version %s, socket %s", h.PID, h.Version, api.SocketPath(d.home))
	defer func() {
		if stopErr := d.stopBroker(h.PID); stopErr != nil && err == nil {
			err = stopErr
		}
	}()

	d.say("Launching the shim as an IDE would (MCP over its stdin/stdout)")
	ide, shimCmd, err := d.startShim(ctx)
	if err != nil {
		return err
	}
	defer ide.Close()
	tools, err := ide.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	d.detail("shim pid %d; tools/list: %s", shimCmd.Process.Pid, strings.Join(names, ", "))
	info, err := d.callJSON(ctx, ide, "get_server_info", nil)
	if err != nil {
		return err
	}
	d.detail("get_server_info over stdio: project %v at %v, transport %v", dig(info, "project", "name"), dig(info, "project", "root"), dig(info, "server", "transport"))

	d.say("A sub-agent reads the state file and calls the same tool over HTTP")
	sf, err := api.ReadStateFile(d.root)
	if err != nil {
		return err
	}
	d.detail("%s: transport %s, url %s, broker pid %d", api.StatePath(d.root), sf.Transport, *sf.URL, sf.PID)
	agent, err := mcp.NewClient(&mcp.Implementation{Name: "demo-sub-agent", Version: api.Version}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: *sf.URL}, nil)
	if err != nil {
		return fmt.Errorf("sub-agent connect %s: %w", *sf.URL, err)
	}
	defer agent.Close()
	info2, err := d.callJSON(ctx, agent, "get_server_info", nil)
	if err != nil {
		return err
	}
	if dig(info2, "project", "root") != dig(info, "project", "root") {
		return fmt.Errorf("the sub-agent reached %v, the IDE %v", dig(info2, "project", "root"), dig(info, "project", "root"))
	}
	d.detail("get_server_info over %v: same project root %v", dig(info2, "server", "transport"), dig(info2, "project", "root"))

	if err := d.extraSteps(ctx, ide, agent); err != nil {
		return err
	}
	if err := d.demoHosting(ctx, client, ide, agent); err != nil {
		return err
	}

	d.say("GET /projects on the broker")
	ps, err := client.Projects(ctx)
	if err != nil {
		return err
	}
	var sb strings.Builder
	printProjects(&sb, ps)
	for _, line := range strings.Split(strings.TrimRight(sb.String(), "\n"), "\n") {
		d.detail("%s", line)
	}

	d.say("Stopping: the IDE closes the shim, then the broker gets SIGTERM")
	agent.Close()
	if err := ide.Close(); err != nil {
		d.detail("shim close: %v", err)
	}
	if st := shimCmd.ProcessState; st != nil {
		d.detail("shim exited with code %d", st.ExitCode())
	}
	return nil
}

// extraSteps shows the engine's tools (search, workflows) when present.
func (d *demo) extraSteps(ctx context.Context, ide, agent *mcp.ClientSession) error {
	return demoSearchAndWorkflow(ctx, d, ide, agent)
}

func (d *demo) startShim(ctx context.Context) (*mcp.ClientSession, *exec.Cmd, error) {
	var cmd *exec.Cmd
	if sibling := filepath.Join(filepath.Dir(d.exe), "berth-shim"); fileExists(sibling) {
		cmd = exec.Command(sibling, "--project", d.root, "--log-level", "warn")
	} else {
		cmd = exec.Command(d.exe, "shim", "--project", d.root, "--log-level", "warn")
	}
	cmd.Env = append(os.Environ(), api.HomeEnv+"="+d.home)
	cmd.Stderr = os.Stderr
	s, err := mcp.NewClient(&mcp.Implementation{Name: "demo-ide", Version: api.Version}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("start shim: %w", err)
	}
	return s, cmd, nil
}

func (d *demo) callJSON(ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) (map[string]any, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		return nil, fmt.Errorf("%s failed: %s", tool, strings.Join(texts, "; "))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: result: %w", tool, err)
	}
	return out, nil
}

func (d *demo) stopBroker(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop broker %d: %w", pid, err)
	}
	sock := api.SocketPath(d.home)
	for i := 0; i < 100; i++ { // at most 10 s
		if _, err := os.Stat(sock); errors.Is(err, os.ErrNotExist) && !api.ProcessAlive(pid) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, statErr := os.Stat(api.StatePath(d.root))
	d.detail("broker %d stopped; state file removed: %v; total %.2fs", pid, errors.Is(statErr, os.ErrNotExist), time.Since(d.start).Seconds())
	fmt.Fprintln(d.out, "\nDemo finished: everything it started is stopped.")
	fmt.Fprint(d.out, demoNext)
	return nil
}

// demoNext is what to do after the demo, with a project of one's own.
const demoNext = `
Next, with your own project:
  1. Install both binaries, side by side (from this checkout):
       CGO_ENABLED=0 go install ./cmd/berth ./cmd/berth-shim
  2. Give the project a .praxis-os/ folder; markdown in .praxis-os/standards/ is searched.
  3. Make your IDE or agent launch Berth for it (cursor, vscode, claude, windsurf,
     claude-code, gemini, codex, zed, cline, goose or opencode):
       berth ide-config claude-code --project DIR --write
     MCP servers that app already runs can move into Berth, shared by every window:
       berth ide-config import vscode --project DIR
  4. Host a server of your own, as the demo hosted its notes server: a servers: map in
     DIR/.praxis-os/config.yaml, then berth servers approve DIR (docs/servers.md)
  5. Check: berth doctor, then berth tools --project DIR
`

func writeExample(root string) error {
	sub, err := fs.Sub(exampleFS, "example")
	if err != nil {
		return err
	}
	return fs.WalkDir(sub, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(root, filepath.FromSlash(p))
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// dig reads a nested field of a decoded JSON object.
func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[k]
	}
	return cur
}
