package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/spf13/pflag"
)

// runServers is `berth servers [--project DIR] [--json]`, `berth servers
// approve DIR [NAME...]`, `berth servers revoke DIR [NAME...]` and `berth
// servers restart DIR NAME`.
func runServers(ctx context.Context, args []string) error {
	return shownErr(serversCommand(ctx, args))
}

func serversCommand(ctx context.Context, args []string) error {
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
		// A folder in no project is listed while a window has it mounted.
		r, _, err := api.RootOrFolder(*dir)
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
		return writeJSON(os.Stdout, list)
	}
	printServers(os.Stdout, list.Projects, root != "", true)
	return nil
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
// action and connects to the broker (starting one when start). Only a
// restart (!start, of a mounted project) takes a folder in no project too:
// the user's servers run there while a window has it mounted.
func resolveAndConnect(ctx context.Context, dir string, start bool) (string, *api.Client, error) {
	root, err := api.ProjectRootOf(dir)
	if !start && errors.Is(err, api.ErrNotProject) {
		root, _, err = api.RootOrFolder(dir)
	}
	if err != nil {
		return "", nil, err
	}
	c, err := connect(ctx, start)
	return root, c, err
}

// runApproveServers records the approval of the servers a project declares
// and prints exactly what was approved: every value of each definition,
// what it runs and reaches, and what now runs.
func runApproveServers(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("servers approve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	others := fs.Bool("other-writers", false, "approve even though another account owns or may write the project's config or a file the approval covers")
	asJSON := fs.Bool("json", false, "print the API's answer as JSON")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() < 1 {
		return usageError{"needs the project directory: berth servers approve [--other-writers] DIR [NAME...]"}
	}
	root, c, err := resolveAndConnect(ctx, fs.Arg(0), true)
	if err != nil {
		return err
	}
	resp, err := c.ApproveServers(ctx, api.ApproveRequest{Root: root, Servers: fs.Args()[1:], OtherWriters: *others})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(os.Stdout, resp)
	}
	fmt.Printf("approved for %s (each runs as you, until its definition or a file it runs changes):\n", printable(root))
	for _, a := range resp.Approved {
		if a.ShadowedBy != "" {
			fmt.Printf("  %s: approved, but NOT served: %s declares a server %q too, and that one runs (rename one of them)\n", printable(a.Name), a.ShadowedBy, a.Name)
		} else {
			fmt.Printf("  %s: %s\n", printable(a.Name), printable(a.Command))
		}
		printDefinition(os.Stdout, "    ", root, &a.Definition)
	}
	if *others {
		fmt.Println("approved with --other-writers: another account that can write those files can change what runs as you; Berth still stops a server whose files change, until you approve again")
	}
	fmt.Println("now:")
	printServers(os.Stdout, []api.ProjectServers{resp.Project}, true, false)
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
	printServers(os.Stdout, []api.ProjectServers{ps}, true, false)
	return nil
}

// runRestartServer starts a failed server of a mounted project again, or
// a running one anew, and returns once it serves again (the broker waits
// for that) or with the reason it does not.
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
	fmt.Printf("restarted %s of %s: serving again\n", args[1], root)
	printServers(os.Stdout, []api.ProjectServers{ps}, true, false)
	return nil
}
