// Command berth runs the Berth broker and talks to it: serve, projects,
// attach, detach, call, search, demo and more (`berth help`).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/project/workflow/lambdaproc"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
	// exitForced: `berth serve` stopped by a second signal, without a clean shutdown.
	exitForced = 3
)

// usageError marks a wrong command line (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

type command struct {
	name, args, summary string
	run                 func(ctx context.Context, args []string) error
	// noFlags marks a command that takes no flags: run answers its
	// --help (the others print their flags as they parse them).
	noFlags bool
}

func commands() []command {
	return []command{
		{"serve", "[flags]", "run the broker in the foreground", runServe, false},
		{"projects", "[--json]", "list the projects the broker serves", runProjects, false},
		{"attach", "DIR", "serve a project over HTTP with no IDE (kept across restarts)", runAttach, true},
		{"detach", "DIR", "stop serving a project attached with `berth attach`", runDetach, true},
		{"tools", "--project DIR [--json]", "list the project's MCP tools (name, group, what each does) and what each tools listing mode holds, in tokens", runTools, false},
		{"call", "--project DIR TOOL [JSON-args]", "call one MCP tool and print its result", runCall, false},
		{"search", "--project DIR QUERY", "search the project's standards", runSearch, false},
		{"workflows", "--project DIR", "list the project's workflow definitions (with errors)", runWorkflows, false},
		{"sessions", "--project DIR", "list the project's workflow sessions and their progress", runSessions, false},
		{"servers", "[--project DIR] | approve/revoke/restart", "hosted MCP servers: list, approve DIR, revoke DIR, restart DIR NAME", runServers, false},
		{"clients", "[--project DIR] [--close ID]", "list the MCP sessions of the projects (or end one)", runClients, false},
		{"shim", "[--project DIR] [--transport T]", "act as berth-shim (MCP on stdio)", runShim, false},
		{"ide-config", "[import] APP [--scope S] [--transport T]", "print (or --write) the app's entry that runs berth-shim (APP: cursor, claude, vscode, windsurf, claude-code, gemini, codex, zed, cline, goose, opencode); import moves its other servers into Berth", runIDEConfig, false},
		{"service", "install|uninstall|status", "run the broker as a user service (systemd/launchd)", runService, false},
		{"dashboard", "", "print a one-time link that opens the dashboard in a browser", runDashboard, true},
		{"demo", "", "run Berth end to end on a built-in example project", runDemo, true},
		{"example-server", "[--dir DIR]", "run the example notes MCP server on stdio (add, list and search notes; a resource per note), to host in a project", runExampleServer, false},
		{"doctor", "", "check every config, the home, socket, lock, database, ports, state files and versions; exit 1 when something needs you", runDoctor, true},
		{"stop", "", "stop the running broker (clean shutdown) and wait for it to exit", runStop, true},
		{"version", "", "print this berth's version and the running broker's", runVersion, true},
	}
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) > 0 && args[0] == lambdaproc.ChildCommand {
		// Not a user's command: the broker runs a gate's lambdas in it.
		return lambdaproc.Main(args[1:], os.Stdin, os.Stdout, os.Stderr)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage()
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		var err error
		if c.noFlags && helpRequested(args[1:]) {
			err = showHelp(c.name, nil)
		} else {
			err = c.run(ctx, args[1:])
		}
		switch {
		case err == nil, errors.Is(err, errHelpShown), errors.Is(err, context.Canceled) && ctx.Err() != nil:
			return exitOK
		case errors.As(err, new(usageError)):
			fmt.Fprintf(os.Stderr, "berth %s: %v\nusage: berth %s %s\n", c.name, err, c.name, c.args)
			return exitUsage
		default:
			fmt.Fprintf(os.Stderr, "berth %s: %v\n", c.name, err)
			return exitFail
		}
	}
	fmt.Fprintf(os.Stderr, "berth: unknown command %q (see `berth help`)\n", args[0])
	return exitUsage
}

func usage() {
	fmt.Fprintln(os.Stderr, "berth: one local broker for the MCP tools of many projects\n\nusage: berth COMMAND [args]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(os.Stderr, "  %-10s %-34s %s\n", c.name, c.args, c.summary)
	}
	home, cfg := "$BERTH_HOME (default ~/.local/state/berth)", "~/.config/berth/config.yaml"
	if h, err := api.DefaultHome(); err == nil {
		home = h
		if cf, err := brokerconfig.FindConfig("", h); err == nil {
			cfg = cf.Want
			if cf.Path == "" {
				cfg += " (none yet)"
			}
		}
	}
	fmt.Fprintf(os.Stderr, "\nThe broker's home is %s; its settings are in\n%s (docs/configuration.md says where each file lives).\n", home, cfg)
}
