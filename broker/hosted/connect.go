package hosted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newClient builds the one MCP client of an upstream: every generation
// connects with it, so roots persist across restarts.
func (u *upstream) newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "berth", Version: u.opts.Version}, &mcp.ClientOptions{
		Logger:                        slog.New(quiet{u.log.Handler()}),
		CreateMessageWithToolsHandler: u.sample,
		ElicitationHandler:            u.elicit,
		ToolListChangedHandler:        func(context.Context, *mcp.ToolListChangedRequest) { poke(u.pokec) },
		PromptListChangedHandler:      func(context.Context, *mcp.PromptListChangedRequest) { poke(u.pokec) },
		ResourceListChangedHandler:    func(context.Context, *mcp.ResourceListChangedRequest) { poke(u.pokec) },
		ResourceUpdatedHandler:        u.resourceUpdated,
		ProgressNotificationHandler:   u.progress,
		LoggingMessageHandler:         u.logMessage,
	})
}

// connect starts the server (or dials its url), runs the MCP handshake and
// lists what it offers, all within StartTimeout; a command waits for its
// turn first (starts.go), and its StartTimeout counts from there.
func (u *upstream) connect() (*generation, *lists, error) {
	u.update(func() {
		if u.state != StateRestarting {
			u.state = StateStarting
		}
	})
	if u.def.URL == "" {
		release, err := u.opts.turns.take(u.ctx)
		if err != nil {
			return nil, nil, err // stopped while waiting: run sees u.ctx ended
		}
		defer release()
	}
	ctx, cancel := context.WithTimeout(u.ctx, u.opts.StartTimeout)
	defer cancel()
	g := &generation{ended: make(chan struct{})}
	var t mcp.Transport
	var st *stdioTransport
	if u.def.URL != "" {
		if u.opts.CheckURL != nil {
			if err := u.opts.CheckURL(ctx, u.label, u.def.URL); err != nil {
				return nil, nil, refusedError{err}
			}
		}
		t = &mcp.StreamableClientTransport{Endpoint: u.def.URL}
	} else {
		emit := func(text string) {
			u.stderr.add(Line{Time: time.Now(), Server: u.label, Text: text})
			u.log.Info("hosted server stderr", "server", u.label, "line", text)
			u.echo.line(u.label, text)
		}
		p, err := startProc(u.opts.procs, u.label, u.def.Command, u.def.Args, u.cwd, u.def.Env, emit)
		if err != nil {
			if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil, nil, fmt.Errorf("%w: %v; install it, or correct servers.%s.command (or cwd) in the config that declares it, then `berth servers restart`", errUnrunnable, err, u.label)
			}
			return nil, nil, fmt.Errorf("start %s: %w (check servers.%s.command and cwd)", u.def.Command, err, u.label)
		}
		g.p = p
		st = &stdioTransport{r: p.stdout, w: p.stdin, progress: u.calls.sawProgress}
		t = st
	}
	fail := func(err error) (*generation, *lists, error) {
		g.close(u.opts.StopGrace)
		if g.p != nil {
			err = fmt.Errorf("%w (%s)", err, g.p.exitText())
		}
		if last := u.stderr.last(); last != "" {
			err = fmt.Errorf("%w; last stderr: %q", err, last)
		}
		return nil, nil, err
	}
	cs, err := u.client.Connect(ctx, t, nil)
	if err != nil {
		return fail(fmt.Errorf("MCP handshake: %w", err))
	}
	g.cs = cs
	if st != nil && cs.InitializeResult().ProtocolVersion < sessionlessProtocol {
		g.raw = st.conn // a sessionless server wants the go-sdk's per-request _meta on each call
	}
	go g.watch()
	ls, err := list(ctx, cs)
	if err != nil {
		return fail(fmt.Errorf("list its tools: %w", err))
	}
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Logging != nil {
		// Some servers (the go-sdk's among them) log nothing until asked.
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: upstreamLogLevel}); err != nil {
			u.log.Debug("hosted server refused logging/setLevel", "server", u.label, "err", err)
		}
	}
	return g, ls, nil
}

// errUnrunnable marks a command that cannot be started at all (missing,
// not executable, its cwd gone): the server fails at once.
var errUnrunnable = errors.New("its command cannot be run")

// refusedError is a connection refused before it was tried (Options.CheckURL):
// trying again cannot help, so the server fails at once.
type refusedError struct{ error }

func (e refusedError) Unwrap() error { return e.error }

// upstreamLogLevel is the level Berth asks of every server that logs: its
// messages at that level and above go to the broker's log and to each
// session of the projects holding it, at the level that session set.
const upstreamLogLevel mcp.LoggingLevel = "info"

// watch closes g.ended when the process exits or the connection ends.
func (g *generation) watch() {
	conn := make(chan struct{})
	go func() { g.cs.Wait(); close(conn) }()
	var exited <-chan struct{}
	if g.p != nil {
		exited = g.p.exited
	}
	select {
	case <-conn:
	case <-exited:
	}
	close(g.ended)
}

// list reads everything the server offers, following pagination.
func list(ctx context.Context, cs *mcp.ClientSession) (*lists, error) {
	caps := cs.InitializeResult().Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	ls := &lists{}
	if caps.Tools != nil {
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("tools/list: %w", err)
			}
			ls.tools = append(ls.tools, rawSchemas(t))
		}
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("prompts/list: %w", err)
			}
			ls.prompts = append(ls.prompts, p)
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("resources/list: %w", err)
			}
			ls.resources = append(ls.resources, r)
		}
		for t, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("resources/templates/list: %w", err)
			}
			ls.templates = append(ls.templates, t)
		}
	}
	return ls, nil
}

// rawSchemas keeps a tool's schemas as the JSON the server sent, so they
// are served intact and marshaled once.
func rawSchemas(t *mcp.Tool) *mcp.Tool {
	for _, s := range []*any{&t.InputSchema, &t.OutputSchema} {
		if *s == nil {
			continue
		}
		if raw, err := json.Marshal(*s); err == nil {
			*s = json.RawMessage(raw)
		}
	}
	return t
}

// logMessage logs what the server sends as notifications/message and
// passes it on to the sessions of the projects holding the server.
func (u *upstream) logMessage(_ context.Context, req *mcp.LoggingMessageRequest) {
	u.relay.send(u.label, req.Params)
	level := slog.LevelInfo
	switch strings.ToLower(string(req.Params.Level)) {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	u.log.Log(context.Background(), level, "hosted server log", "server", u.label, "logger", req.Params.Logger, "data", req.Params.Data)
}

// quiet keeps only the SDK's warnings and errors (as the engine's servers do).
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}
