package search

import (
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/project/links"
	"github.com/berth-dev/berth/store"
)

// DefaultMaxFileSize is the size cap used when [Options.MaxFileSize] is 0.
const DefaultMaxFileSize = 1 << 20

// Options configure [Open].
type Options struct {
	// Root is the absolute project root.
	Root string
	// Sources are the folders to index, relative to Root (the project
	// config's rag.standards_path, rag.usage_path and rag.workflows_path).
	Sources []string
	// DB holds the persistent index, in the area (ProjectID, "index").
	DB        *store.DB
	ProjectID string
	// Logger receives skipped files, rebuilds and persistence errors; nil
	// discards them. Its records should already name the project (the
	// engine's logger does): the index adds no project attribute of its own.
	Logger *slog.Logger
	// MaxFileSize skips larger files (logged); 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Links decides which symlinks are followed (the source folders' own
	// included); nil follows only those leading inside Root. A file whose
	// links lead elsewhere is skipped, logged and listed in
	// [Status.Warnings].
	Links *links.Policy
	// Embedder, when set, embeds every section (vectors stored in DB by
	// content, so an unchanged section is embedded once) and each query;
	// its ranking is fused with BM25F's. Its failure or absence leaves
	// BM25F alone.
	Embedder Embedder
	// Shared, when set, makes the index a view of a repository's content
	// index shared by its worktrees (see [Shared]): it keeps no stored index
	// and no vectors of its own.
	Shared *Shared
	// GitDir is the worktree's own git directory (for a view of a shared
	// index): a large change is held while git's lock on its index there
	// shows a checkout under way, then applied whole.
	GitDir string

	// beforeBatch, when set (by tests), runs before each batch of a
	// catch-up.
	beforeBatch func()
	// ranking, when set (by the relevance benchmark), replaces
	// defaultRanking.
	ranking *ranking
}

// normalize checks opts and returns a copy with defaults applied and the
// sources cleaned to slash-separated relative paths.
func (o Options) normalize() (Options, error) {
	if o.DB == nil {
		return o, errors.New("search: Options.DB is nil")
	}
	if o.ProjectID == "" {
		return o, errors.New("search: Options.ProjectID is empty")
	}
	if !filepath.IsAbs(o.Root) {
		return o, fmt.Errorf("search: project root %q is not absolute", o.Root)
	}
	o.Root = filepath.Clean(o.Root)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Links == nil {
		o.Links = links.New(o.Root, nil)
	}
	var srcs []string
	seen := map[string]bool{}
	for _, s := range o.Sources {
		c := path.Clean(filepath.ToSlash(s))
		if filepath.IsAbs(s) || !filepath.IsLocal(filepath.FromSlash(c)) {
			return o, fmt.Errorf("search: source %q must be a relative path inside the project", s)
		}
		if !seen[c] {
			seen[c] = true
			srcs = append(srcs, c)
		}
	}
	o.Sources = srcs
	return o, nil
}

// sourceOf returns the source folder that holds rel (a clean, slash-separated
// path relative to the root), or "" when none does.
func (o *Options) sourceOf(rel string) string {
	for _, s := range o.Sources {
		if s == "." || rel == s || strings.HasPrefix(rel, s+"/") {
			return s
		}
	}
	return ""
}

// indexable reports whether rel names a file the index takes: a markdown
// file inside a source, with no hidden folder (such as .cache) or hidden
// file name below the source folder.
func (o *Options) indexable(rel string) bool {
	src := o.sourceOf(rel)
	if src == "" || rel == src {
		return false
	}
	below := rel
	if src != "." {
		below = rel[len(src)+1:]
	}
	for part := range strings.SplitSeq(below, "/") {
		if skipName(part) {
			return false
		}
	}
	return isMarkdown(rel)
}

// skipName reports whether a file or folder name below a source is skipped:
// hidden names (".git", ".cache", editor swap files) and empty components.
func skipName(name string) bool { return name == "" || name[0] == '.' }

func isMarkdown(rel string) bool {
	ext := strings.ToLower(path.Ext(rel))
	return ext == ".md" || ext == ".markdown"
}

// cleanRel turns a path relative to the root into the index's form; it
// reports false for paths outside the root.
func cleanRel(p string) (string, bool) {
	c := path.Clean(filepath.ToSlash(p))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return "", false
	}
	return c, true
}
