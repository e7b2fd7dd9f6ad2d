package search

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolName is the MCP tool that searches the standards.
const ToolName = "search_standards"

const toolDescription = `Search this project's standards, usage guides and workflows (markdown under .praxis-os) and return the best matching sections.

Name what you look for in the words the document itself would use: the feature's usual name, the option or identifier, the term of art, not only a description of your goal. Send two or three phrasings at once in queries (for example "retry with exponential backoff", "backoff jitter", "RetryPolicy"): each is ranked and the rankings are fused, at no extra turn. Each result names the words of yours it matched (matched_terms) and the terms feedback added (expansion_terms): rephrase with them when the results miss.

Ranking is BM25F over each section's heading path (with its file's title) and its text; words are matched by stem ("closing" finds "close"), code identifiers also match by their parts (snake_case, camelCase, dotted.names), and adjacent words also match the identifier they spell ("fill struct" finds fillStruct). Put a phrase in double quotes to require it word for word.

filter_phase and filter_tags narrow the search to files labelled so (front matter "phase" and "tags", or a workflow's phases/N/ folder), as praxis-os agents send them.

Returns {results: [{file, section, lines: [start, end], relevance_score, content, tokens, tags, phase, matched_terms, expansion_terms}], total, total_tokens, retrieval_method, expansion_terms, query_time_ms}: file is relative to the project root, section is the heading path ("Title > Section > Sub"), relevance_score is higher-is-better (compare scores within one answer only), content is the section text (a window around the matches when the section is long), tokens estimates what content costs in model tokens (total_tokens sums them), retrieval_method is "bm25f" (or "bm25f+vector" when the user's embedding server ranked too), and total counts the matching sections (with several phrasings, those of the one that matched most).`

// searchArgs are the tool's arguments.
type searchArgs struct {
	Query       string   `json:"query"`
	Queries     []string `json:"queries,omitempty"`
	NResults    int      `json:"n_results"`
	PathPrefix  string   `json:"path_prefix,omitempty"`
	FilterPhase *int     `json:"filter_phase,omitempty"`
	FilterTags  []string `json:"filter_tags,omitempty"`
}

// inputSchema is built once: every server shares the pointer, so that the
// SDK's schema cache resolves it once per process.
var inputSchema = sync.OnceValue(func() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"query": {
				Type:        "string",
				Description: `What to look for, in the words the document would use: words, and "quoted phrases" that must appear as written.`,
			},
			"queries": {
				Types:       []string{"array", "null"},
				Items:       &jsonschema.Schema{Type: "string"},
				MaxItems:    jsonschema.Ptr(maxPhrasings),
				Description: fmt.Sprintf(`More phrasings of the same question (with query, at most %d in all), ranked each and fused: name the feature as the docs would, its identifier, a synonym.`, maxPhrasings),
			},
			"n_results": {
				Type:        "integer",
				Description: fmt.Sprintf("How many sections to return (1 to %d).", MaxResults),
				Default:     json.RawMessage(fmt.Sprint(DefaultResults)),
				Minimum:     jsonschema.Ptr(1.0),
				Maximum:     jsonschema.Ptr(float64(MaxResults)),
			},
			"path_prefix": {
				Type:        "string",
				Description: `Only search files whose path (relative to the project root) starts with this, e.g. ".praxis-os/standards/testing".`,
			},
			"filter_phase": {
				Types:       []string{"integer", "null"},
				Minimum:     jsonschema.Ptr(0.0),
				Description: `Only search files of this workflow phase: a "phase: N" front matter key, or a workflow's phases/N/ folder.`,
			},
			"filter_tags": {
				Types:       []string{"array", "null"},
				Items:       &jsonschema.Schema{Type: "string", MaxLength: jsonschema.Ptr(maxTagBytes)},
				MaxItems:    jsonschema.Ptr(maxFilterTags),
				Description: fmt.Sprintf(`Only search files whose front matter "tags" lists every one of these (compared without case; at most %d).`, maxFilterTags),
			},
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
})

// AddTools registers search_standards on s, answering from ix. Bad
// arguments (an empty query, n_results outside 1..50, a path_prefix outside
// the project) come back as tool errors. While the first indexing after Open
// runs, a call waits for it and, when the client sent a progress token,
// reports the indexing progress as MCP progress notifications.
func AddTools(s *mcp.Server, ix *Index) {
	typedtool.Add(s, &mcp.Tool{
		Name:        ToolName,
		Title:       "Search project standards",
		Description: toolDescription,
		InputSchema: inputSchema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, args searchArgs) (*mcp.CallToolResult, *Result, error) {
		q := Query{Text: args.Query, Queries: args.Queries, N: args.NResults, PathPrefix: args.PathPrefix, Phase: args.FilterPhase, Tags: args.FilterTags}
		if _, err := compileAll(q); err != nil {
			return nil, nil, err
		}
		if !ix.Ready() {
			if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
				ix.reportProgress(ctx, req.Session, token)
			}
		}
		res, err := ix.Search(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		return nil, res, nil
	})
}

// reportProgress sends a progress notification now and at every step of the
// first indexing, until it ends or ctx does.
func (ix *Index) reportProgress(ctx context.Context, ss *mcp.ServerSession, token any) {
	last := -1
	for {
		p, changed := ix.watchProgress()
		// Wait until the walk has counted the files, then report each step.
		if p.Total > 0 && p.Done > last {
			last = p.Done
			err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(p.Done),
				Total:         float64(p.Total),
				Message:       fmt.Sprintf("indexing standards: %d of %d files", p.Done, p.Total),
			})
			if err != nil {
				ix.log.Debug("search: progress notification failed", "err", err)
				return
			}
		}
		select {
		case <-ix.ready:
			return
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}
