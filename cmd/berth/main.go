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
}

func commands() []command {
	return []command{
		{"serve", "[flags]", "run the broker in the foreground", runServe},
		{"projects", "[--json]", "list the projects the broker serves", runProjects},
		{"attach", "DIR", "serve a project over HTTP with no IDE (kept across restarts)", runAttach},
		{"detach", "DIR", "stop serving a project attached with `berth attach`", runDetach},
		{"tools", "--project DIR [--json]", "list the project's MCP tools: name, group, what each does", runTools},
		{"call", "--project DIR TOOL [JSON-args]", "call one MCP tool and print its result", runCall},
		{"search", "--project DIR QUERY", "search the project's standards", runSearch},
		{"workflows", "--project DIR", "list the project's workflow definitions (with errors)", runWorkflows},
		{"sessions", "--project DIR", "list the project's workflow sessions and their progress", runSessions},
		{"servers", "[--project DIR] | approve/revoke/restart", "hosted MCP servers: list, approve DIR, revoke DIR, restart DIR NAME", runServers},
		{"clients", "[--project DIR] [--close ID]", "list the MCP sessions of the projects (or end one)", runClients},
		{"shim", "[--project DIR] [--transport T]", "act as berth-shim (MCP on stdio)", runShim},
		{"ide-config", "[import] APP [--scope S] [--transport T]", "print (or --write) the app's entry that runs berth-shim (APP: cursor, claude, vscode, windsurf, claude-code, gemini, codex, zed, cline, goose, opencode); import moves its other servers into Berth", runIDEConfig},
		{"service", "install|uninstall|status", "run the broker as a user service (systemd/launchd)", runService},
		{"dashboard", "", "print a one-time link that opens the dashboard in a browser", runDashboard},
		{"demo", "", "run Berth end to end on a built-in example project", runDemo},
		{"example-server", "[--dir DIR]", "run the example notes MCP server on stdio (add, list and search notes; a resource per note), to host in a project", runExampleServer},
		{"doctor", "", "check every config, the home, socket, lock, database, ports, state files and versions; exit 1 when something needs you", runDoctor},
		{"stop", "", "stop the running broker (clean shutdown) and wait for it to exit", runStop},
		{"version", "", "print this berth's version and the running broker's", runVersion},
	}
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
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
		err := c.run(ctx, args[1:])
		switch {
		case err == nil, errors.Is(err, context.Canceled) && ctx.Err() != nil:
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
	fmt.Fprintln(os.Stderr, "\nThe broker's home is $BERTH_HOME (default ~/.local/state/berth); its settings are in\n~/.config/berth/config.yaml (docs/configuration.md says where each file lives).")
}
