package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/workflow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

// runSearch: berth search --project DIR [-n N] [--path PREFIX] [--also PHRASING]... [--explain] [--json] "query"
func runSearch(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("search", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", ".", "project directory")
	n := fs.IntP("n", "n", 5, "number of results (1-50)")
	prefix := fs.String("path", "", "only files under this path prefix (relative to the root)")
	also := fs.StringArray("also", nil, "another phrasing of the question, ranked too and fused (repeatable)")
	explain := fs.Bool("explain", false, "show the words each result matched and the terms feedback added")
	asJSON := fs.Bool("json", false, "print the tool's JSON result")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 && len(*also) == 0 {
		return usageError{"needs a query"}
	}
	toolArgs := map[string]any{"query": strings.Join(fs.Args(), " "), "n_results": *n}
	if len(*also) > 0 {
		toolArgs["queries"] = *also
	}
	if *prefix != "" {
		toolArgs["path_prefix"] = *prefix
	}
	var out search.Result
	return callAndPrint(ctx, *dir, "search_standards", toolArgs, *asJSON, &out, func(w io.Writer) {
		if len(out.Results) == 0 {
			fmt.Fprintln(w, "no results")
			return
		}
		for i, r := range out.Results {
			fmt.Fprintf(w, "%d. %s:%d-%d  %s  (score %.2f)\n", i+1, r.File, r.Lines[0], r.Lines[1], r.Section, r.RelevanceScore)
			if *explain {
				fmt.Fprintf(w, "   matched: %s\n", wordList(r.MatchedTerms))
				if len(r.ExpansionTerms) > 0 {
					fmt.Fprintf(w, "   through feedback: %s\n", wordList(r.ExpansionTerms))
				}
			}
			fmt.Fprintf(w, "   %s\n\n", excerpt(r.Content, 240))
		}
		fmt.Fprintf(w, "%d of %d result(s), %.2f ms\n", len(out.Results), out.Total, out.QueryTimeMS)
		if *explain {
			fmt.Fprintf(w, "ranked by %s", out.RetrievalMethod)
			if len(out.ExpansionTerms) > 0 {
				fmt.Fprintf(w, "; feedback added %s", wordList(out.ExpansionTerms))
			}
			fmt.Fprintln(w)
		}
	})
}

// wordList shows words for a person: comma-separated, "none" for none.
func wordList(words []string) string {
	if len(words) == 0 {
		return "none"
	}
	return strings.Join(words, ", ")
}

// runWorkflows: berth workflows --project DIR [--json]
func runWorkflows(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("workflows", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", ".", "project directory")
	asJSON := fs.Bool("json", false, "print the tool's JSON result")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	var out workflow.WorkflowList
	return callAndPrint(ctx, *dir, "list_workflows", nil, *asJSON, &out, func(w io.Writer) {
		if len(out.Workflows) == 0 {
			fmt.Fprintln(w, "no workflows defined (add them under .praxis-os/workflows/<type>/metadata.json)")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKFLOW\tVERSION\tSTATUS\tPHASES\tWARNINGS\tDESCRIPTION")
		for _, wf := range out.Workflows {
			desc := excerpt(wf.Description, 60)
			if wf.Error != "" {
				desc = "error: " + wf.Error
			}
			phases := fmt.Sprint(wf.TotalPhases)
			if wf.Dynamic {
				phases += "+N" // the rest are generated at start
				desc = "(phases from " + wf.DynamicSource + ") " + desc
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", wf.WorkflowType, wf.Version, wf.Status, phases, len(wf.Warnings), desc)
		}
		tw.Flush()
		for _, wf := range out.Workflows {
			if wf.Error != "" || len(wf.Warnings) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n%s is %s, with warnings:\n", wf.WorkflowType, wf.Status)
			for _, warn := range wf.Warnings {
				fmt.Fprintf(w, "  - %s\n", warn)
			}
		}
	})
}

// runSessions: berth sessions --project DIR [--status S] [--json]
func runSessions(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("sessions", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("project", ".", "project directory")
	status := fs.String("status", "", "only sessions with this status (active, completed)")
	asJSON := fs.Bool("json", false, "print the tool's JSON result")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	var toolArgs map[string]any
	if *status != "" {
		toolArgs = map[string]any{"status": *status}
	}
	var out workflow.SessionList
	return callAndPrint(ctx, *dir, "list_workflow_sessions", toolArgs, *asJSON, &out, func(w io.Writer) {
		if len(out.Sessions) == 0 {
			fmt.Fprintln(w, "no workflow sessions")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tWORKFLOW\tTARGET\tSTATUS\tPHASE\tPROGRESS\tUPDATED")
		for _, s := range out.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.SessionID, s.WorkflowType, s.TargetFile, s.Status, s.CurrentPhase, s.Progress, s.UpdatedAt)
		}
		tw.Flush()
	})
}

// callAndPrint calls tool and prints its result as JSON or with table.
func callAndPrint(ctx context.Context, dir, tool string, args map[string]any, asJSON bool, out any, table func(io.Writer)) error {
	res, err := callTool(ctx, dir, tool, args)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s", toolErrorText(res))
	}
	if asJSON || res.StructuredContent == nil {
		// An answer in words only (a folder's search_standards says how
		// to start using .praxis-os/) is printed as it is.
		return printResult(os.Stdout, res)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: unexpected result: %w", tool, err)
	}
	table(os.Stdout)
	return nil
}

func toolErrorText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "; ")
}

func excerpt(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := strings.LastIndex(s[:max], " ")
	if cut < max/2 {
		cut = max
	}
	return s[:cut] + " …"
}
