// Package notes is a small MCP server that keeps notes in a folder: tools
// to add, list and search them, and a resource per note (note://ID).
// `berth example-server` runs it on stdio; `berth demo` hosts it in its
// example project, where every window and sub-agent share one process.
//
// Each note is a JSON file in the folder, written atomically; the folder
// is read at each call, so the notes survive a restart. One mutex, the
// store's, serializes writes within the process.
package notes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/berth-dev/berth/api"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on what a client may store and ask.
const (
	MaxTitle = 200
	MaxBody  = 64 << 10
	MaxTags  = 16
	MaxQuery = 200
	MaxNotes = 10000 // per folder: add_note refuses more
)

// Note is one note.
type Note struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Body    string    `json:"body"`
	Tags    []string  `json:"tags,omitempty"`
	Created time.Time `json:"created"`
}

// URI is the note's resource.
func (n Note) URI() string { return "note://" + n.ID }

// Store is a folder of notes.
type Store struct {
	dir string
	mu  sync.Mutex // serializes add
}

// Open returns the store of dir, creating the folder.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("notes folder %s: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

var validID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,80}$`)

// Add stores a new note and returns it.
func (s *Store) Add(title, body string, tags []string) (Note, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return Note{}, errors.New("title is empty: give the note a title")
	case len(title) > MaxTitle || len(body) > MaxBody || len(tags) > MaxTags:
		return Note{}, fmt.Errorf("the note is too large: at most %d bytes of title, %d of body and %d tags", MaxTitle, MaxBody, MaxTags)
	case !utf8.ValidString(title + body + strings.Join(tags, "")):
		return Note{}, errors.New("the note is not valid UTF-8")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.List()
	if err != nil {
		return Note{}, err
	}
	if len(all) >= MaxNotes {
		return Note{}, fmt.Errorf("the folder holds %d notes, the most it keeps: remove some from %s", len(all), s.dir)
	}
	base := slug(title)
	id := base
	for i := 2; slices.ContainsFunc(all, func(n Note) bool { return n.ID == id }); i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	n := Note{ID: id, Title: title, Body: body, Tags: tags, Created: time.Now().UTC()}
	data, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		return Note{}, err
	}
	if err := api.WriteFileAtomic(filepath.Join(s.dir, id+".json"), append(data, '\n'), 0o644); err != nil {
		return Note{}, fmt.Errorf("write note: %w", err)
	}
	return n, nil
}

// List returns the notes, oldest first. Files that are not notes are skipped.
func (s *Store) List() ([]Note, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("read notes folder %s: %w", s.dir, err)
	}
	var out []Note
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validID.MatchString(id) || !e.Type().IsRegular() {
			continue
		}
		if n, err := s.Get(id); err == nil {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b Note) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// Get returns the note id.
func (s *Store) Get(id string) (Note, error) {
	if !validID.MatchString(id) {
		return Note{}, fmt.Errorf("no note %q", id)
	}
	data, err := os.ReadFile(filepath.Join(s.dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return Note{}, fmt.Errorf("no note %q (list_notes names them)", id)
	} else if err != nil {
		return Note{}, err
	}
	if len(data) > MaxBody+MaxTitle+4096 {
		return Note{}, fmt.Errorf("note %q is larger than a note can be", id)
	}
	var n Note
	if err := json.Unmarshal(data, &n); err != nil || n.ID != id {
		return Note{}, fmt.Errorf("note %q does not read as a note", id)
	}
	return n, nil
}

// Search returns the notes whose title, body or tags hold every word of
// query (case does not matter).
func (s *Store) Search(query string) ([]Note, error) {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 || len(query) > MaxQuery {
		return nil, fmt.Errorf("query: give one to %d bytes of words", MaxQuery)
	}
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []Note
	for _, n := range all {
		text := strings.ToLower(n.Title + "\n" + n.Body + "\n" + strings.Join(n.Tags, " "))
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(text, w) }) {
			out = append(out, n)
		}
	}
	return out, nil
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		out = "note"
	}
	return out
}

// Server is the MCP server of a store.
func Server(s *Store, version string) (*mcp.Server, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "berth-notes", Title: "Notes (Berth's example server)", Version: version}, &mcp.ServerOptions{
		Instructions: "Notes kept in a folder: add_note, list_notes, search_notes; each note is the resource note://ID.",
		// Resources with listChanged from the start: a folder without notes has one once add_note runs.
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Resources: &mcp.ResourceCapabilities{ListChanged: true}},
	})
	pid := os.Getpid()
	addResource := func(n Note) {
		srv.AddResource(&mcp.Resource{URI: n.URI(), Name: n.ID, Title: n.Title, MIMEType: "text/markdown"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			cur, err := s.Get(n.ID)
			if err != nil {
				return nil, mcp.ResourceNotFoundError(n.URI())
			}
			return readResult(cur), nil
		})
	}
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, n := range all {
		addResource(n)
	}
	// The template answers a note added a moment ago, before a client (or
	// a broker in front of this server) has heard its list_changed.
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "note://{id}", Name: "note", Title: "A note, by its id", MIMEType: "text/markdown"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id, ok := strings.CutPrefix(req.Params.URI, "note://")
			cur, err := s.Get(id)
			if !ok || err != nil {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return readResult(cur), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_note", Description: "Store a note (title, body, optional tags); it becomes the resource note://ID."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, noteOut, error) {
			n, err := s.Add(in.Title, in.Body, in.Tags)
			if err != nil {
				return nil, noteOut{}, err
			}
			addResource(n)
			return nil, noteOut{ID: n.ID, URI: n.URI(), ServerPID: pid}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "list_notes", Description: "List the notes: id, title, tags, when each was added."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, listOut, error) {
			all, err := s.List()
			return nil, listOut{Notes: summaries(all), ServerPID: pid}, err
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "search_notes", Description: "Find the notes whose title, body or tags hold every word of the query."},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, listOut, error) {
			found, err := s.Search(in.Query)
			return nil, listOut{Notes: summaries(found), ServerPID: pid}, err
		})
	return srv, nil
}

// readResult is a note as resources/read answers it.
func readResult(n Note) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: n.URI(), MIMEType: "text/markdown", Text: "# " + n.Title + "\n\n" + n.Body}}}
}

type addIn struct {
	Title string   `json:"title" jsonschema:"the note's title"`
	Body  string   `json:"body" jsonschema:"the note's text (markdown)"`
	Tags  []string `json:"tags,omitempty" jsonschema:"words to find it by"`
}

type searchIn struct {
	Query string `json:"query" jsonschema:"words the note must hold"`
}

type noteOut struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	ServerPID int    `json:"server_pid" jsonschema:"the pid of the notes server that answered"`
}

// Summary is a note without its body.
type Summary struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Tags    []string  `json:"tags,omitempty"`
	URI     string    `json:"uri"`
	Created time.Time `json:"created"`
}

type listOut struct {
	Notes     []Summary `json:"notes"`
	ServerPID int       `json:"server_pid" jsonschema:"the pid of the notes server that answered"`
}

func summaries(ns []Note) []Summary {
	out := []Summary{}
	for _, n := range ns {
		out = append(out, Summary{ID: n.ID, Title: n.Title, Tags: n.Tags, URI: n.URI(), Created: n.Created})
	}
	return out
}
