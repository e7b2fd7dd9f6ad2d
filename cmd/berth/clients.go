package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/spf13/pflag"
)

// projectClients is one project's MCP sessions, as `berth clients --json`
// prints them.
type projectClients struct {
	Project  string        `json:"project"`
	Root     string        `json:"root"`
	Sessions []api.Session `json:"sessions"`
}

// runClients: berth clients [--project DIR] [--json] | --close ID [--project DIR]
func runClients(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("clients", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", "", "only this project (default: every mounted project)")
	closeID := fs.String("close", "", "end the MCP session with this id (its next request gets 404)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	c, err := connect(ctx, false)
	if err != nil {
		return err
	}
	var projects []api.Project
	if *dir != "" {
		id, root, err := projectID(*dir)
		if err != nil {
			return err
		}
		p, err := c.Project(ctx, id)
		if err != nil {
			return notMountedHint(err, root)
		}
		projects = []api.Project{p}
	} else if projects, err = c.Projects(ctx); err != nil {
		return err
	}
	if *closeID != "" {
		return closeClient(ctx, c, projects, *closeID)
	}
	var all []projectClients
	for _, p := range projects {
		list, err := c.Sessions(ctx, p.ID)
		if errors.Is(err, api.CodeNotMounted) && *dir == "" {
			continue // unmounted meanwhile
		}
		if err != nil {
			return err
		}
		all = append(all, projectClients{Project: p.ID, Root: p.Root, Sessions: list})
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	printClients(os.Stdout, all, *dir == "")
	return nil
}

// closeClient ends session id, looked for in projects.
func closeClient(ctx context.Context, c *api.Client, projects []api.Project, id string) error {
	for _, p := range projects {
		err := c.CloseSession(ctx, p.ID, id)
		switch {
		case err == nil:
			fmt.Printf("closed MCP session %s of %s\n", id, p.Root)
			return nil
		case errors.Is(err, api.CodeNoSession), errors.Is(err, api.CodeNotMounted):
			continue
		default:
			return err
		}
	}
	return fmt.Errorf("no MCP session %s in %s (see `berth clients`)", id, projectNames(projects))
}

func projectNames(ps []api.Project) string {
	if len(ps) == 0 {
		return "any mounted project (none is mounted)"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Root
	}
	return strings.Join(names, ", ")
}

// slowReader says what a session lost by reading too slowly, or "-".
func slowReader(s api.Session) string {
	var parts []string
	if s.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d notifications dropped", s.Dropped))
	}
	if s.StreamsCut > 0 {
		parts = append(parts, fmt.Sprintf("%d streams cut", s.StreamsCut))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func printClients(w io.Writer, all []projectClients, withProject bool) {
	n := 0
	for _, pc := range all {
		n += len(pc.Sessions)
	}
	if n == 0 {
		fmt.Fprintln(w, "no MCP sessions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tTRANSPORT\tCLIENT\tSTATE\tAGE\tIDLE\tSLOW READER"
	if withProject {
		head = "PROJECT\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, pc := range all {
		for _, s := range pc.Sessions {
			client := strings.TrimSpace(s.Client + " " + s.ClientVersion)
			if client == "" {
				client = "-"
			}
			idle := "-"
			if s.State == api.SessionIdle {
				idle = (time.Duration(s.IdleSeconds * float64(time.Second))).Round(time.Second).String()
			}
			row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", s.ID, s.Transport, client, s.State, time.Since(s.StartedAt).Round(time.Second), idle, slowReader(s))
			if withProject {
				row = pc.Project + "\t" + row
			}
			fmt.Fprintln(tw, row)
		}
	}
	tw.Flush()
}
