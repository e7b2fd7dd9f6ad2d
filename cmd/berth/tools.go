package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/berth-dev/berth/project"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

// toolInfo is one line of `berth tools`.
type toolInfo struct {
	Name        string `json:"name"`
	Group       string `json:"group"`
	Description string `json:"description"`
}

// runTools: berth tools --project DIR [--json] lists the tools the
// project serves: name, group and the first line of the description.
func runTools(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("tools", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", ".", "project directory")
	asJSON := fs.Bool("json", false, "print JSON (with the whole descriptions)")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	var tools []toolInfo
	err := withSession(ctx, *dir, func(sess *mcp.ClientSession, prog *progress) error {
		prog.set("listing the tools")
		for t, err := range sess.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("tools/list: %w", err)
			}
			group, _ := t.Meta[project.GroupMetaKey].(string)
			tools = append(tools, toolInfo{Name: t.Name, Group: group, Description: t.Description})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"tools": tools})
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tGROUP\tDESCRIPTION")
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Group, firstLine(t.Description, 90))
	}
	tw.Flush()
	fmt.Printf("%d tools; call one with `berth call --project %s TOOL [JSON-args]`\n", len(tools), *dir)
	return nil
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
