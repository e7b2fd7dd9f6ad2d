package project

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unique"

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

// published is a file the catalog publishes: its resource, shared by
// every server of the engine (its Name is the file's path), and the hash
// of the content it was published with.
//
// A worktree's catalog publishes the same paths as its siblings': there,
// each resource's description is one string for all of them (interned),
// and its path is the index's own, which a view of a shared index interns
// too, so that a sibling costs its URIs and little more. A project of its
// own interns nothing: no other project shares its strings, and interning
// costs a few microseconds a string.
type published struct {
	res  *mcp.Resource
	hash [16]byte
	desc unique.Handle[string] // keeps res.Description interned; zero when not
}

// publishFile describes an indexed file as an MCP resource; intern shares its
// description with other worktrees'.
func publishFile(uri string, f search.File, intern bool) published {
	p := published{hash: f.Hash}
	desc := "Project standard (markdown) at " + f.Path
	if intern {
		p.desc = unique.Make(desc)
		desc = p.desc.Value()
	}
	p.res = &mcp.Resource{
		URI:         uri,
		Name:        f.Path,
		Title:       resourceTitle(f),
		Description: desc,
		MIMEType:    "text/markdown",
		Size:        f.Size,
	}
	return p
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

// syncFiles brings the published resources in line with the index: new
// files are added and gone ones removed on every server (each sends
// notifications/resources/list_changed), and a file whose content changed
// is announced to its subscribers (notifications/resources/updated).
func (c *catalog) syncFiles(ctx context.Context) {
	files := c.index.Files()
	uris := make([]string, len(files))
	for i, f := range files {
		uris[i] = fileURI(filepath.Join(c.root, filepath.FromSlash(f.Path)))
	}
	c.mu.Lock()
	now := make(map[string]published, len(files))
	var res []*mcp.Resource
	for i, f := range files {
		uri := uris[i]
		old, ok := c.files[uri]
		if ok && old.hash == f.Hash && old.res.Title == resourceTitle(f) && old.res.Size == f.Size {
			now[old.res.URI] = old
			continue
		}
		p := publishFile(uri, f, c.index.SharesContent())
		now[uri] = p
		res = append(res, p.res)
	}
	var gone, updated []string
	for uri, old := range c.files {
		p, ok := now[uri]
		switch {
		case !ok:
			gone = append(gone, uri)
		case p.hash != old.hash:
			updated = append(updated, uri)
		}
	}
	c.files = now
	servers := append([]*mcp.Server(nil), c.servers...)
	c.mu.Unlock()

	c.publish(ctx, servers, res, c.read, gone, updated)
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
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.files[uri]
	if !ok {
		return "", false
	}
	return p.res.Name, true
}

// read answers resources/read with the file's current content.
func (c *catalog) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rel, ok := c.lookup(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
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
