package finder

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/project/search"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sep joins a hosted server's name and its tool's: memory__read_graph.
const Sep = hosted.Sep

// Tool is one tool of a catalog: as the project serves it (a hosted
// server's as <server>__<tool>), with its input schema as JSON.
type Tool struct {
	Tool   *mcp.Tool
	Server string          // the hosted server it comes from; "" for Berth's own
	Schema json.RawMessage // its input schema

	resolveOnce sync.Once
	resolved    *jsonschema.Resolved
	resolveErr  error
}

// NewTool makes t a catalog entry from server ("" for Berth's own).
func NewTool(t *mcp.Tool, server string) (*Tool, error) {
	raw, err := schemaJSON(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	return &Tool{Tool: t, Server: server, Schema: raw}, nil
}

func schemaJSON(s any) (json.RawMessage, error) {
	switch v := s.(type) {
	case nil:
		return json.RawMessage(`{"type":"object"}`), nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(s)
}

// Resolved is the tool's input schema, resolved once for validation.
func (t *Tool) Resolved() (*jsonschema.Resolved, error) {
	t.resolveOnce.Do(func() {
		var s jsonschema.Schema
		if err := json.Unmarshal(t.Schema, &s); err != nil {
			t.resolveErr = fmt.Errorf("input schema of %s: %w", t.Tool.Name, err)
			return
		}
		t.resolved, t.resolveErr = s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
		if t.resolveErr != nil {
			t.resolveErr = fmt.Errorf("input schema of %s: %w", t.Tool.Name, t.resolveErr)
		}
	})
	return t.resolved, t.resolveErr
}

// Fields of a tool's document, as the catalog weighs them.
const (
	fieldName   = iota // the tool's own name, split into words, and its title
	fieldDesc          // its description
	fieldParams        // its parameters' names, descriptions and allowed values
	fieldServer        // the name of the server it comes from
	nFields
)

// specs are the fields' weights and length normalizations.
var specs = [nFields]search.FieldSpec{
	fieldName:   {Weight: 3, B: 0.5},
	fieldDesc:   {Weight: 1, B: 0.75},
	fieldParams: {Weight: 0.25, B: 0.75},
	fieldServer: {Weight: 1, B: 0},
}

// Catalog ranks a fixed set of tools for a task (rank.go). It is
// immutable: a new set of tools is a new Catalog.
type Catalog struct {
	tools  []*Tool
	byName map[string]*Tool
	fx     *search.Fields
	names  [][]string // by tool: the index terms of its own name, never empty
}

// NewCatalog indexes tools (names must be unique: a later duplicate is
// left out).
func NewCatalog(tools []*Tool) *Catalog {
	c := &Catalog{byName: make(map[string]*Tool, len(tools))}
	docs := make([][]string, 0, len(tools))
	for _, t := range tools {
		if c.byName[t.Tool.Name] != nil {
			continue
		}
		c.byName[t.Tool.Name] = t
		c.tools = append(c.tools, t)
		docs = append(docs, document(t))
		c.names = append(c.names, nameTerms(t))
	}
	c.fx = search.NewFields(specs[:], docs, search.FieldsOptions{}) // related words are the query's (query.go)
	return c
}

// document is t's text by field.
func document(t *Tool) []string {
	doc := make([]string, nFields)
	name := strings.TrimPrefix(t.Tool.Name, t.Server+Sep)
	// Dashes and underscores both separate the words of a name.
	doc[fieldName] = strings.ReplaceAll(name, "-", "_") + " " + t.Tool.Title
	doc[fieldDesc] = t.Tool.Description
	var params strings.Builder
	var props struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.Schema, &props) == nil {
		paramText(&params, props.Properties, 0)
	}
	doc[fieldParams] = params.String()
	doc[fieldServer] = t.Server
	return doc
}

// paramText writes the names, descriptions and enum values of props and
// of their nested properties (two levels down).
func paramText(b *strings.Builder, props map[string]json.RawMessage, depth int) {
	for _, name := range slices.Sorted(maps.Keys(props)) {
		var p struct {
			Description string                     `json:"description"`
			Enum        []any                      `json:"enum"`
			Properties  map[string]json.RawMessage `json:"properties"`
			Items       struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"items"`
		}
		_ = json.Unmarshal(props[name], &p)
		b.WriteString(strings.ReplaceAll(name, "-", "_"))
		b.WriteString(" ")
		b.WriteString(p.Description)
		for _, e := range p.Enum {
			if s, ok := e.(string); ok {
				b.WriteString(" " + s)
			}
		}
		b.WriteString("\n")
		if depth < 2 {
			paramText(b, p.Properties, depth+1)
			paramText(b, p.Items.Properties, depth+1)
		}
	}
}

// Len is the number of tools.
func (c *Catalog) Len() int { return len(c.tools) }

// Lookup is the tool served as name, or nil.
func (c *Catalog) Lookup(name string) *Tool { return c.byName[name] }

// maxQueryBytes bounds a task's text: a sentence or two.
const maxQueryBytes = 2000

// Find ranks the tools for query and returns the best n, best first.
func (c *Catalog) Find(query string, n int) ([]*Tool, error) {
	if strings.TrimSpace(query) == "" {
		return nil, search.ErrEmptyQuery
	}
	if len(query) > maxQueryBytes {
		return nil, fmt.Errorf("query is %d bytes long; keep it under %d: say in a sentence what you want to do", len(query), maxQueryBytes)
	}
	hits := c.rank(query)
	out := make([]*Tool, 0, n)
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, c.tools[h.Doc])
	}
	return out, nil
}

// nameTerms are the index terms of t's own name, what it does first
// (read_text_file, get-tiny-image); [""] for a name of no words.
func nameTerms(t *Tool) []string {
	if w := search.Words(strings.ReplaceAll(strings.TrimPrefix(t.Tool.Name, t.Server+Sep), "-", "_")); len(w) > 0 {
		return w
	}
	return []string{""}
}
