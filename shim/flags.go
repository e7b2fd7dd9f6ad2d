package shim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// Usage is berth-shim's --help.
const Usage = `usage: berth-shim [--project DIR] [--transport dual|stdio|http] [--tools all|finder|auto] [--log-level L] [--home DIR]

An IDE runs berth-shim as an MCP server. It attaches the project to the
Berth broker, starting one if none runs. The project is --project, else
$PROJECT_ROOT (either: the project the folder is in), else
$AGENT_OS_BASE_PATH (praxis-os's: the project root or its .praxis-os
folder), else the nearest ancestor of the working directory holding
.praxis-os/, else the first of the IDE's workspace folders (its MCP roots)
in a project. A folder in no project (--project, else the first workspace
folder, else the working directory when the IDE names none) is served as
a folder: your servers from the broker's config, no standards, nothing
written into it; never /, your home directory or a folder above it. The
broker writes a project's state file .praxis-os/.mcp_server_state.json for
sub-agents, from what every window and pin of the project asked for. When
the shim cannot serve, it answers the IDE's requests with an error that
names the problem and the fix.

--transport, what the IDE speaks and what this window asks the state file to offer:
  dual   (default) MCP on stdin/stdout for the IDE; the state file names the
         project's HTTP port for sub-agents. Use it unless you have a reason not to.
  stdio  MCP on stdin/stdout; this window offers no network endpoint (the
         state file says stdio with null port and url unless another window
         or a pin of the project asked for the port).
  http   for IDEs that speak MCP over HTTP: nothing is forwarded on stdio. The
         shim attaches (the state file says http, or dual) and holds the
         project until stdin closes; point the IDE at the state file's url.

--tools, what this window's tools/list holds (default: the project's
mcp.tools_listing):
  all    every tool the project offers, Berth's own and its hosted servers'.
  finder Berth's core tools with find_tools, which finds any other tool for
         a task, and call_tool, which calls it: a short listing for clients
         that send every tool to the model at every turn.
  auto   the finder once the project offers more than mcp.finder_threshold
         tools, unless the client searches tools itself (Claude Code, the
         Copilot CLI: finder.clients_with_tool_search).

Logs go to stderr; stdout carries only MCP.`

// ErrHelp is what ParseFlags returns for --help: its text is Usage.
var ErrHelp = errors.New(Usage)

// ParseFlags reads `berth-shim [--project DIR] [--transport dual|stdio|http]
// [--log-level L]`. On error it returns the exit code to use: 0 for
// --help (ErrHelp), 2 for a bad flag.
func ParseFlags(args []string) (Options, int, error) {
	fs := flag.NewFlagSet("berth-shim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	var level string
	fs.StringVar(&o.Project, "project", "", "project root (default: $PROJECT_ROOT, $AGENT_OS_BASE_PATH, the nearest ancestor holding .praxis-os/, the IDE's workspace folders)")
	fs.StringVar(&o.Transport, "transport", "dual", "what the state file offers sub-agents: dual, stdio or http")
	fs.StringVar(&level, "log-level", "info", "debug, info, warn or error (logs go to stderr)")
	fs.StringVar(&o.Home, "home", "", "broker home (default: $BERTH_HOME, else the user state dir)")
	fs.StringVar(&o.Tools, "tools", "", "what this window's tools/list holds: all, finder or auto (default: the project's mcp.tools_listing)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, 0, ErrHelp
		}
		return o, 2, fmt.Errorf("%v (usage: berth-shim [--project DIR] [--transport dual|stdio|http] [--log-level L])", err)
	}
	if fs.NArg() > 0 {
		return o, 2, fmt.Errorf("unexpected argument %q (usage: berth-shim [--project DIR] [--transport dual|stdio|http])", fs.Arg(0))
	}
	switch o.Tools {
	case "", "all", "finder", "auto":
	default:
		return o, 2, fmt.Errorf("--tools %q: use all, finder or auto", o.Tools)
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return o, 2, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	return o, 0, nil
}

// Main runs the shim on the process's own stdin and stdout.
func Main(ctx context.Context, o Options) error {
	o.Stdin, o.Stdout = os.Stdin, os.Stdout
	return Run(ctx, o)
}

// Refuse answers the requests on in with a JSON-RPC error naming problem
// (which says the fix), for a shim that cannot start at all (a bad flag):
// the IDE shows the reason instead of a timeout. It returns when in
// closes, shortly after the last answer, or after 30 s.
func Refuse(ctx context.Context, in io.Reader, out io.Writer, problem error) {
	lines := make(chan []byte)
	done := make(chan struct{})
	defer close(done)
	go readLines(in, lines, done, slog.New(slog.DiscardHandler))
	refuse(ctx, lines, nil, out, problem)
}
