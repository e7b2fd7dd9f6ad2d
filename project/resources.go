package project

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/project/search"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResourceBytes bounds what a resource read returns: the index skips
// larger files, so an indexed file is smaller unless it grew since.
const maxResourceBytes = 4 << 20

// fileURI is the resource URI of a file: file:// and its absolute path.
func fileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// fileEntry is an indexed file the catalog serves as a resource. It keeps
// the index's own strings (a worktree's view of a shared index interns its
// paths, and titles are its sections'), and nothing per file is
// registered with the go-sdk: resources/list and resources/read of files
// are answered from the catalog's table (filemw.go), so that a sibling
// worktree costs its table and little more. Its URI is made when asked.
type fileEntry struct {
	path  string // relative to the root, slash-separated: the resource's Name
	title string
	size  int64
	hash  [16]byte
}

// uriOf is the resource URI of the file at rel (relative to the root).
func (c *catalog) uriOf(rel string) string {
	if plainPath(rel) {
		return c.uriPrefix + rel
	}
	return fileURI(filepath.Join(c.root, filepath.FromSlash(rel)))
}

// uriPrefix is the root's URI with a slash after it: a plain path's URI is
// it and the path.
func uriPrefix(root string) string {
	p := fileURI(root)
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// plainPath reports whether rel is a clean relative path of letters,
// digits and -._~ only, which a file URI holds as is: its URI is the
// root's and rel after it, and plain paths are in the order of their URIs.
// Clean here is path.Clean's, checked in one pass: no segment is empty,
// "." or "..".
func plainPath(rel string) bool {
	if rel == "" || rel[0] == '/' {
		return false
	}
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i == len(rel) || rel[i] == '/' {
			if seg := rel[start:i]; seg == "" || seg == "." || seg == ".." {
				return false
			}
			start = i + 1
			continue
		}
		switch b := rel[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '-', b == '_', b == '.', b == '~':
		default:
			return false
		}
	}
	return true
}

// compareURI compares the URI of the file at rel with uri, making no URI
// for a plain path.
func (c *catalog) compareURI(rel, uri string) int {
	if rest, ok := strings.CutPrefix(uri, c.uriPrefix); ok && plainPath(rel) {
		return strings.Compare(rel, rest)
	}
	return strings.Compare(c.uriOf(rel), uri)
}

// sortByURI sorts files in the order of their URIs: by path when every
// path is plain, which is the same order.
func (c *catalog) sortByURI(files []fileEntry) {
	plain := true
	for _, f := range files {
		if !plainPath(f.path) {
			plain = false
			break
		}
	}
	if plain {
		// Through a permutation: the sort moves 4 bytes at each step, not
		// an entry (a quarter of the time for a worktree's 2,000 files).
		order := make([]int32, len(files))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(a, b int32) int { return strings.Compare(files[a].path, files[b].path) })
		sorted := make([]fileEntry, len(files))
		for i, j := range order {
			sorted[i] = files[j]
		}
		copy(files, sorted)
		return
	}
	type keyed struct {
		uri string
		f   fileEntry
	}
	byURI := make([]keyed, len(files))
	for i, f := range files {
		byURI[i] = keyed{c.uriOf(f.path), f}
	}
	slices.SortFunc(byURI, func(a, b keyed) int { return strings.Compare(a.uri, b.uri) })
	for i, k := range byURI {
		files[i] = k.f
	}
}

// resource describes a file, at uri, as an MCP resource.
func (f fileEntry) resource(uri string) *mcp.Resource {
	return &mcp.Resource{
		URI:         uri,
		Name:        f.path,
		Title:       f.title,
		Description: "Project standard (markdown) at " + f.path,
		MIMEType:    "text/markdown",
		Size:        f.size,
	}
}

// resourceTitle is a file's title, else its name without the extension.
func resourceTitle(f search.File) string {
	if f.Title != "" {
		return f.Title
	}
	return strings.TrimSuffix(path.Base(f.Path), path.Ext(f.Path))
}

// followIndex publishes the indexed files and follows every change to them
// until ctx ends.
func (c *catalog) followIndex(ctx context.Context) {
	defer close(c.done)
	// Files waits for the index's writer: start after the first catch-up,
	// so that closing the engine during a long first build does not wait
	// for it here.
	if c.index.WaitReady(ctx); ctx.Err() != nil {
		return
	}
	follow(ctx, c.index.FilesChanged, c.syncFiles)
}

// follow calls sync now and after each close of the channel changed
// returns, until ctx ends.
func follow(ctx context.Context, changed func() <-chan struct{}, sync func(context.Context)) {
	for {
		next := changed()
		sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

// syncFiles brings the served files in line with the index: when files
// come, go or change, every server tells its sessions the list changed
// (notifications/resources/list_changed), and a file whose content changed
// is announced to its subscribers (notifications/resources/updated).
func (c *catalog) syncFiles(ctx context.Context) {
	files := c.index.Files()
	table := make([]fileEntry, len(files))
	for i, f := range files {
		table[i] = fileEntry{path: f.Path, title: resourceTitle(f), size: f.Size, hash: f.Hash}
	}
	c.sortByURI(table)
	held := fileTables.intern(table)
	table = held.entries()
	c.mu.Lock()
	old := c.files.entries()
	c.files = held
	servers := slices.Clone(c.servers)
	c.mu.Unlock()

	// Both are in URI order: walk them side by side.
	changed := len(old) != len(table)
	var updated []string
	for i, j := 0, 0; i < len(old) || j < len(table); {
		var cmp int
		switch {
		case i == len(old):
			cmp = 1
		case j == len(table):
			cmp = -1
		case old[i].path == table[j].path:
		default:
			cmp = c.compareURI(old[i].path, c.uriOf(table[j].path))
		}
		switch {
		case cmp < 0: // gone
			changed = true
			i++
		case cmp > 0: // new
			changed = true
			j++
		default:
			if old[i] != table[j] {
				changed = true // the go-sdk announced a resource replaced by another as a list change
			}
			if old[i].hash != table[j].hash {
				updated = append(updated, c.uriOf(old[i].path))
			}
			i++
			j++
		}
	}
	if changed {
		for _, s := range servers {
			listChanged(s)
		}
	}
	c.publish(ctx, servers, nil, nil, nil, updated)
}

// publish adds (or replaces) added, removes gone and announces updated to
// their subscribers on every server. Call it outside c.mu: a server a
// concurrent serve added already has the new state, and adding a resource
// again only replaces it.
func (c *catalog) publish(ctx context.Context, servers []*mcp.Server, added []*mcp.Resource, read mcp.ResourceHandler, gone, updated []string) {
	for _, s := range servers {
		for _, r := range added {
			s.AddResource(r, read)
		}
		if len(gone) > 0 {
			s.RemoveResources(gone...)
		}
		for _, uri := range updated {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				c.log.Debug("resource updated notification failed", "uri", uri, "err", err)
			}
		}
	}
}

// lookup returns the path (relative to the root) of the indexed file a
// URI names.
func (c *catalog) lookup(uri string) (string, bool) {
	if c == nil {
		return "", false
	}
	files := c.table()
	i, ok := c.find(files, uri)
	if !ok {
		return "", false
	}
	return files[i].path, true
}

// table is the files served now, in URI order. It is never changed once
// set: syncFiles sets a new one.
func (c *catalog) table() []fileEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files.entries()
}

// find is the position in files (in URI order) of the first file whose
// URI is uri or above, and whether that one is uri.
func (c *catalog) find(files []fileEntry, uri string) (int, bool) {
	return slices.BinarySearchFunc(files, uri, func(f fileEntry, uri string) int {
		return c.compareURI(f.path, uri)
	})
}

// read answers resources/read of the file at rel, whose URI is uri, with
// its current content.
func (c *catalog) read(uri, rel string) (*mcp.ReadResourceResult, error) {
	data, err := readCapped(filepath.Join(c.root, filepath.FromSlash(rel)), maxResourceBytes)
	if os.IsNotExist(err) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "text/markdown", Text: string(data)},
	}}, nil
}

// subscribe accepts a subscription to a published resource.
func (c *catalog) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if c.hasSession(req.Params.URI) {
		return nil
	}
	if _, ok := c.lookup(req.Params.URI); !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}

// readCapped reads a file, refusing one larger than limit.
func readCapped(name string, limit int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("file is %d bytes, more than the %d a resource read returns", fi.Size(), limit)
	}
	return os.ReadFile(name)
}
