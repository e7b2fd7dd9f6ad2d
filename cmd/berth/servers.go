package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/berth-dev/berth/api"
	"github.com/spf13/pflag"
)

// runServers is `berth servers [--project DIR] [--json]`, `berth servers
// approve DIR [NAME...]`, `berth servers revoke DIR [NAME...]` and `berth
// servers restart DIR NAME`.
func runServers(ctx context.Context, args []string) error {
	sub := map[string]func(context.Context, []string) error{"approve": runApproveServers, "revoke": runRevokeServers, "restart": runRestartServer}
	if len(args) > 0 && sub[args[0]] != nil {
		if helpRequested(args[1:]) {
			return showHelp("servers "+args[0], nil)
		}
		return sub[args[0]](ctx, args[1:])
	}
	fs := pflag.NewFlagSet("servers", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", "", "one project, mounted or not (default: every mounted project)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q (to approve: berth servers approve DIR)", fs.Arg(0))}
	}
	root := ""
	if *dir != "" {
		r, err := api.ProjectRootOf(*dir)
		if err != nil {
			return err
		}
		root = r
	}
	// One project is listed mounted or not: the broker reads its config
	// and approvals, started for it if none runs (as `berth call` does).
	c, err := connect(ctx, root != "")
	if err != nil {
		return err
	}
	list, err := c.Servers(ctx, root)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	printServers(os.Stdout, list.Projects, root != "")
	return nil
}

func printServers(w io.Writer, ps []api.ProjectServers, one bool) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "no mounted project declares MCP servers (a servers: map in .praxis-os/config.yaml or in the broker's config.yaml; see docs/servers.md)")
		return
	}
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		mounted := "mounted"
		if !p.Mounted {
			mounted = "not mounted"
		}
		fmt.Fprintf(w, "%s  %s  (%s)\n", p.Name, p.Root, mounted)
		if len(p.Servers) == 0 {
			if one {
				fmt.Fprintln(w, "  declares no MCP servers (see docs/servers.md)")
			}
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tSTATE\tPID\tTOOLS\tRESTARTS\tRSS\tCALLS\tERRORS\tORIGIN\tLAST ERROR")
		for _, s := range p.Servers {
			pid, rss := "-", "-"
			if s.PID > 0 {
				pid = fmt.Sprint(s.PID)
			}
			if s.RSSBytes > 0 {
				rss = fmt.Sprintf("%.1f MiB", float64(s.RSSBytes)/(1<<20))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t%s\t%s\n", s.Name, s.State, pid, s.Tools, s.Restarts, rss,
				s.Calls, s.Errors, s.Origin, oneLine(s.LastError, 100))
		}
		tw.Flush()
		for _, s := range p.Servers {
			if s.Fix != "" {
				fmt.Fprintf(w, "  %s (%s): run `%s`\n", s.Name, s.Command, s.Fix)
			}
		}
	}
}

// oneLine keeps the first line of s, at most n bytes of it.
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// resolveAndConnect resolves the project directory dir of a `berth servers`
// action and connects to the broker (starting one when start).
func resolveAndConnect(ctx context.Context, dir string, start bool) (string, *api.Client, error) {
	root, err := api.ProjectRootOf(dir)
	if err != nil {
		return "", nil, err
	}
	c, err := connect(ctx, start)
	return root, c, err
}

// runApproveServers records the approval of the servers a project declares.
func runApproveServers(ctx context.Context, args []string) error {
	if len(args) < 1 {
		return usageError{"needs the project directory: berth servers approve DIR [NAME...]"}
	}
	root, c, err := resolveAndConnect(ctx, args[0], true)
	if err != nil {
		return err
	}
	resp, err := c.ApproveServers(ctx, api.ApproveRequest{Root: root, Servers: args[1:]})
	if err != nil {
		return err
	}
	fmt.Printf("approved for %s (each runs as you, until its definition changes):\n", root)
	for _, a := range resp.Approved {
		fmt.Printf("  %s: %s\n", a.Name, a.Command)
	}
	printServers(os.Stdout, []api.ProjectServers{resp.Project}, true)
	return nil
}

// runRevokeServers withdraws the approval of a project's servers.
func runRevokeServers(ctx context.Context, args []string) error {
	if len(args) < 1 {
		return usageError{"needs the project directory: berth servers revoke DIR [NAME...]"}
	}
	root, c, err := resolveAndConnect(ctx, args[0], true)
	if err != nil {
		return err
	}
	ps, err := c.RevokeServers(ctx, api.RevokeRequest{Root: root, Servers: args[1:]})
	if err != nil {
		return err
	}
	what := "every server"
	if len(args) > 1 {
		what = strings.Join(args[1:], ", ")
	}
	fmt.Printf("approval withdrawn for %s of %s: stopped, and not run again until approved\n", what, root)
	printServers(os.Stdout, []api.ProjectServers{ps}, true)
	return nil
}

// runRestartServer starts a failed server of a mounted project again.
func runRestartServer(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return usageError{"needs the project directory and the server's name: berth servers restart DIR NAME"}
	}
	root, c, err := resolveAndConnect(ctx, args[0], false)
	if err != nil {
		return err
	}
	ps, err := c.RestartServer(ctx, api.RestartRequest{Root: root, Server: args[1]})
	if err != nil {
		return notMountedHint(err, root)
	}
	fmt.Printf("restarting %s of %s\n", args[1], root)
	printServers(os.Stdout, []api.ProjectServers{ps}, true)
	return nil
}
