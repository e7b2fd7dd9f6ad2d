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
	"github.com/berth-dev/berth/broker/finder"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

// toolInfo is one line of `berth tools`.
type toolInfo struct {
	Name        string `json:"name"`
	Group       string `json:"group"`
	Description string `json:"description"`
	Finder      bool   `json:"finder"` // listed in finder mode too
}

// listing is what one tools listing mode holds.
type listing struct {
	Tools  []string `json:"tools"`
	Tokens int      `json:"tokens"` // what the model reads of it at every turn: finder.ListingTokens
}

// toolsReport is `berth tools --json`.
type toolsReport struct {
	Tools           []toolInfo         `json:"tools"`
	Listings        map[string]listing `json:"listings"` // all and finder
	ToolsListing    string             `json:"tools_listing"`
	FinderThreshold int                `json:"finder_threshold"`
	// Auto is what auto lists to a client that does not search tools
	// itself (all or finder); those of ClientsWithToolSearch get all.
	Auto                  string   `json:"auto"`
	ClientsWithToolSearch []string `json:"clients_with_tool_search"`
}

// runTools: berth tools --project DIR [--json] lists the tools the
// project serves (name, group, whether finder mode lists it, the first
// line of the description) and what each tools listing mode holds, with
// its size in tokens.
func runTools(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("tools", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", ".", "project directory")
	asJSON := fs.Bool("json", false, "print JSON (with the whole descriptions)")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	modes := []string{string(finder.ModeAll), string(finder.ModeFinder)}
	rep := toolsReport{Listings: map[string]listing{}}
	err := withSessions(ctx, *dir, modes, func(sess []*mcp.ClientSession, prog *progress) error {
		prog.set("listing the tools")
		lists := make([][]*mcp.Tool, len(sess))
		for i, s := range sess {
			for t, err := range s.Tools(ctx, nil) {
				if err != nil {
					return fmt.Errorf("tools/list (%s): %w", modes[i], err)
				}
				lists[i] = append(lists[i], t)
			}
			l := listing{Tokens: finder.ListingTokens(lists[i])}
			for _, t := range lists[i] {
				l.Tools = append(l.Tools, t.Name)
			}
			rep.Listings[modes[i]] = l
		}
		inFinder := map[string]bool{}
		for _, name := range rep.Listings[string(finder.ModeFinder)].Tools {
			inFinder[name] = true
		}
		for _, t := range lists[0] {
			group, _ := t.Meta[project.GroupMetaKey].(string)
			rep.Tools = append(rep.Tools, toolInfo{Name: t.Name, Group: group, Description: t.Description, Finder: inFinder[t.Name]})
		}
		return nil
	})
	if err != nil {
		return err
	}
	cfg := config.Default()
	if root, err := api.ProjectRootOf(*dir); err == nil {
		if c, err := config.Load(root); err == nil {
			cfg = c
		}
	}
	rep.ToolsListing, rep.FinderThreshold, rep.ClientsWithToolSearch = cfg.MCP.ToolsListing, cfg.MCP.FinderThreshold, cfg.Finder.ClientsWithToolSearch
	rep.Auto = string(finder.ModeAll)
	if len(rep.Tools) > cfg.MCP.FinderThreshold {
		rep.Auto = string(finder.ModeFinder)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printTools(os.Stdout, rep, *dir)
	return nil
}

func printTools(w io.Writer, rep toolsReport, dir string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tGROUP\tFINDER\tDESCRIPTION")
	for _, t := range rep.Tools {
		listed := "found"
		if t.Finder {
			listed = "listed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Group, listed, firstLine(t.Description, 90))
	}
	tw.Flush()
	all, fm := rep.Listings[string(finder.ModeAll)], rep.Listings[string(finder.ModeFinder)]
	fmt.Fprintf(w, "\n%d tools; call one with `berth call --project %s TOOL [JSON-args]`\n", len(rep.Tools), dir)
	fmt.Fprintf(w, "tools/list by mode, in the tokens a model reads of it (names, descriptions, input schemas):\n")
	fmt.Fprintf(w, "  all     %4d tools  %6d tokens\n", len(all.Tools), all.Tokens)
	fmt.Fprintf(w, "  finder  %4d tools  %6d tokens  (%s)\n", len(fm.Tools), fm.Tokens, strings.Join(fm.Tools, ", "))
	fmt.Fprintf(w, "  auto    %s (%d tools, mcp.finder_threshold %d); all for %s\n", rep.Auto, len(rep.Tools), rep.FinderThreshold, strings.Join(rep.ClientsWithToolSearch, ", "))
	fmt.Fprintf(w, "this project lists %s (mcp.tools_listing); a client may ask with ?%s= on the project URL or berth-shim --tools\n", rep.ToolsListing, api.ToolsParam)
}

// firstLine is a description's first sentence or line, at most max runes.
func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return excerpt(s, max)
}
