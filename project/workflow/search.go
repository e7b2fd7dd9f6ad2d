package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/project/search"
)

// Searcher is the project's standards search as the engine uses it: the
// project engine satisfies it. It answers for phase and task files that a
// definition names but does not have, as praxis-os answers from its index;
// search.ErrOff while the project's rag tool group is off.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (*search.Result, error)
}

// searchHits is how many sections answer for one missing file.
const searchHits = 3

// fromSearch runs query and joins the best sections into one text with
// their origins; found is false when search is off or found nothing.
func (e *Engine) fromSearch(ctx context.Context, query string) (text string, found bool, why string) {
	if e.search == nil {
		return "", false, "the standards search is off for this project (add rag to mcp.enabled_tool_groups)"
	}
	// Task names such as "load-target-definition" are words to the search.
	query = strings.NewReplacer("-", " ", "_", " ").Replace(query)
	res, err := e.search.Search(ctx, search.Query{Text: query, N: searchHits})
	if errors.Is(err, search.ErrOff) {
		return "", false, "the standards search is off for this project (add rag to mcp.enabled_tool_groups)"
	}
	if err != nil {
		e.log.Warn("search for a missing workflow file", "query", query, "err", err)
		return "", false, "the standards search failed: " + err.Error()
	}
	if len(res.Results) == 0 {
		return "", false, "the standards search found nothing for it"
	}
	var b strings.Builder
	for i, h := range res.Results {
		if i > 0 {
			b.WriteString("\n\n---\n\n")
		}
		fmt.Fprintf(&b, "From %s, lines %d-%d (%s):\n\n%s", h.File, h.Lines[0], h.Lines[1], h.Section, h.Content)
	}
	return b.String(), true, ""
}
