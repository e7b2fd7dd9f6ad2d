package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/shim"
	"github.com/spf13/pflag"
)

func runProjects(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("projects", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	c, err := connect(ctx, false)
	if err != nil {
		return err
	}
	ps, err := c.Projects(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(api.ProjectList{Projects: ps, Repositories: api.GroupRepositories(ps)})
	}
	printProjects(os.Stdout, ps)
	return nil
}

func printProjects(w io.Writer, ps []api.Project) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "no projects are mounted (an IDE running berth-shim, or `berth attach DIR`, mounts one)")
		return
	}
	ps = byRepository(ps)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tKIND\tREPOSITORY\tCHECKOUT\tPORT\tSESSIONS\tHOLDERS\tINDEX\tUP\tROOT")
	for _, p := range ps {
		holders := fmt.Sprint(p.Holders)
		if p.Pinned {
			holders += " (pinned)"
		}
		repo, checkout := repositoryText(p.Repository)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", p.ID, p.Name, kindText(p.Kind), repo, checkout, p.Port, p.Sessions, holders, indexText(p.Index),
			time.Since(p.StartedAt).Round(time.Second), p.Root)
	}
	tw.Flush()
	for _, p := range ps {
		if p.Index != nil && p.Index.LastError != "" {
			fmt.Fprintf(w, "%s: index error: %s\n", p.Name, p.Index.LastError)
		}
	}
}

// kindText is a mount's kind for the table: a project, or a folder in
// no project (no standards, no state file); "" (an older broker) is a
// project.
func kindText(kind string) string {
	if kind == api.KindFolder {
		return "folder (no " + api.ProjectDir + ")"
	}
	return "project"
}

// byRepository orders ps so that the worktrees of one repository follow
// each other, at the place of the repository's first project; the order
// within a group, and of projects in none, is kept.
func byRepository(ps []api.Project) []api.Project {
	out := make([]api.Project, 0, len(ps))
	groups := api.GroupRepositories(ps)
	byID := make(map[string]api.Project, len(ps))
	for _, p := range ps {
		byID[p.ID] = p
	}
	placed := make(map[string]bool)
	for _, p := range ps {
		if p.Repository == nil {
			out = append(out, p)
			continue
		}
		if placed[p.Repository.ID] {
			continue
		}
		placed[p.Repository.ID] = true
		for _, g := range groups {
			if g.ID == p.Repository.ID {
				for _, id := range g.Projects {
					out = append(out, byID[id])
				}
			}
		}
	}
	return out
}

// repositoryText is a project's repository and checkout for the table:
// "berth (main)" or "berth (worktree fix)", and the branch, or "detached
// 1a2b3c4"; "-" for a project in no repository.
func repositoryText(r *api.Repository) (repo, checkout string) {
	if r == nil {
		return "-", "-"
	}
	repo = r.Name + " (main)"
	if r.Worktree != "" {
		repo = r.Name + " (worktree " + r.Worktree + ")"
	}
	switch {
	case r.Branch != "":
		checkout = r.Branch
	case len(r.Commit) >= 7:
		checkout = "detached " + r.Commit[:7]
	default:
		checkout = "-"
	}
	return repo, checkout
}

// indexText is a project's index state for the table: "ready, 120 files",
// "indexing 8448/18006 files", "off"; with ", error (below)" when the
// index has an error, which follows the table.
func indexText(ix *api.IndexState) string {
	var s string
	switch {
	case ix == nil:
		return "off"
	case ix.Total > 0:
		s = fmt.Sprintf("%s %d/%d files", ix.State, ix.Done, ix.Total)
	case ix.State == "ready":
		s = fmt.Sprintf("ready, %d files", ix.Files)
	default:
		s = ix.State
	}
	if ix.LastError != "" {
		s += ", error (below)"
	}
	return s
}

func runAttach(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageError{"needs exactly one project directory"}
	}
	root, err := api.ProjectRootOf(args[0])
	if err != nil {
		return err
	}
	home, err := api.DefaultHome()
	if err != nil {
		return err
	}
	prog := startProgress("attaching " + root)
	a, err := shim.Attach(ctx, shim.AttachOptions{Home: home, Root: root, Transport: api.TransportHTTP, Kind: api.HolderCLI})
	prog.end()
	if err != nil {
		return err
	}
	fmt.Printf("attached %s\n  id:    %s\n  url:   %s\n  state: %s\n", a.Resp.Root, a.Resp.ID, a.Resp.URL, api.StatePath(a.Resp.Root))
	for _, w := range a.Resp.Warnings {
		fmt.Fprintf(os.Stderr, "berth attach: warning: %s\n", w)
	}
	return nil
}

func runDetach(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageError{"needs exactly one project directory"}
	}
	id, root, err := projectID(args[0])
	if err != nil {
		return err
	}
	c, err := connect(ctx, false)
	if err != nil {
		return err
	}
	if err := c.Detach(ctx, id, ""); err != nil {
		return notMountedHint(err, root)
	}
	fmt.Printf("detached %s (it stops being served once no IDE uses it, after the grace period)\n", root)
	return nil
}

func runShim(ctx context.Context, args []string) error {
	opts, code, err := shim.ParseFlags(args)
	if err != nil {
		if code == 2 {
			return usageError{err.Error()}
		}
		return err
	}
	return shim.Main(ctx, opts)
}
