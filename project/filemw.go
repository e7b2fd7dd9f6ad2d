package project

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/gob"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The standards files are served without a go-sdk resource each: a
// project of 2,000 files would hold 2,000 of them per server (a map entry,
// a Resource, its strings), and each sibling worktree as many again. The
// engine's receiving middleware answers resources/list and resources/read
// of the files from the catalog's table instead, as the go-sdk answers its
// own: a list is the go-sdk's resources (workflow sessions, hosted servers')
// and the files merged in URI order, in pages of resourcePageSize under
// the go-sdk's cursor, and a read is the go-sdk's answer to a registered
// resource. The go-sdk sends notifications/resources/list_changed only
// when its own resources change: listChanged makes it send one.

// resourcePageSize is the project server's page size (ServerOptions.PageSize),
// which the merged list keeps.
const resourcePageSize = mcp.DefaultPageSize

// listChangedURI names the resource listChanged adds and removes at once;
// no answer shows it.
const listChangedURI = "berth://catalog/list-changed"

// listChanged has s tell its sessions that its resources changed: the
// go-sdk does when a resource is added or removed, and debounces it.
func listChanged(s *mcp.Server) {
	s.AddResource(&mcp.Resource{URI: listChangedURI, Name: "list-changed"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	})
	s.RemoveResources(listChangedURI)
}

// serveFiles is the engine's receiving middleware that serves the files
// of the catalog of the moment.
func (e *Engine) serveFiles(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "resources/list":
			return e.current().catalog.list(ctx, next, method, req, resourcePageSize)
		case "resources/read":
			if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil {
				c := e.current().catalog
				if rel, ok := c.lookup(p.URI); ok {
					return c.readFile(req, p.URI, rel)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// list answers resources/list: the go-sdk's page from the cursor on, and
// the files above the cursor, merged, in pages of pageSize (the server's).
func (c *catalog) list(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request, pageSize int) (mcp.Result, error) {
	res, err := next(ctx, method, req) // an invalid cursor fails here, as it did
	lr, ok := res.(*mcp.ListResourcesResult)
	if err != nil || !ok {
		return res, err
	}
	var files []fileEntry
	if c != nil {
		files = c.table()
	}
	after := ""
	if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil && p.Cursor != "" {
		if after, err = decodeCursor(p.Cursor); err != nil {
			return nil, err // the go-sdk took it: a bug
		}
	}
	from := 0
	if after != "" {
		from, ok = c.find(files, after)
		if ok {
			from++
		}
	}
	files = files[from:]
	sdk := lr.Resources
	merged := make([]*mcp.Resource, 0, min(pageSize, len(sdk)+len(files)))
	more := lr.NextCursor != ""
	last := "" // the URI of the last resource taken (or skipped)
	for len(sdk) > 0 || len(files) > 0 {
		if len(merged) == pageSize {
			more = true
			break
		}
		if len(sdk) > 0 && sdk[0].URI == listChangedURI {
			last = sdk[0].URI
			sdk = sdk[1:]
			continue
		}
		if len(sdk) == 0 && lr.NextCursor != "" {
			break // the go-sdk has more, which may come before the files left
		}
		var uri string
		if len(files) > 0 {
			uri = c.uriOf(files[0].path)
		}
		switch {
		case len(files) == 0 || len(sdk) > 0 && sdk[0].URI < uri:
			merged = append(merged, sdk[0])
			sdk = sdk[1:]
		case len(sdk) > 0 && sdk[0].URI == uri: // a hosted server's resource of the same URI: the file is read
			sdk = sdk[1:]
			fallthrough
		default:
			merged = append(merged, files[0].resource(uri))
			files = files[1:]
		}
	}
	lr.Resources = merged
	lr.NextCursor = ""
	if len(merged) > 0 {
		last = merged[len(merged)-1].URI
	}
	if more && last != "" {
		// A page that skipped the placeholder is one short: the next
		// begins after it all the same.
		if lr.NextCursor, err = encodeCursor(last); err != nil {
			return nil, err
		}
	}
	return lr, nil
}

// readFile answers resources/read of the file at rel, as the go-sdk
// answers it for a resource it holds.
func (c *catalog) readFile(req mcp.Request, uri, rel string) (mcp.Result, error) {
	res, err := c.read(uri, rel)
	if err != nil {
		return nil, err
	}
	if res.CacheScope == "" {
		res.CacheScope = "public"
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && multiRoundTrip(ss) {
		return completeRead{res}, nil
	}
	return res, nil
}

// newProtocol is the first MCP version (2026-07-28) whose read answers say
// "resultType": "complete"; the go-sdk takes it for a session that has not
// said its version.
const newProtocol = "2026-07-28"

// multiRoundTrip reports whether the go-sdk marks ss's read answers
// complete.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	v := newProtocol
	if p := ss.InitializeParams(); p != nil {
		v = p.ProtocolVersion
	}
	return v >= newProtocol
}

// completeRead is a read answer that says "resultType": "complete" as the
// go-sdk's last field, where the go-sdk writes it (it sets the field only
// on the answers of its own handlers).
type completeRead struct{ *mcp.ReadResourceResult }

func (r completeRead) MarshalJSON() ([]byte, error) {
	b, err := r.ReadResourceResult.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(b, []byte("}")) || bytes.Contains(b, []byte(`"resultType"`)) {
		return nil, fmt.Errorf("resources/read answer of an unexpected form: %.100s", b)
	}
	return append(b[:len(b)-1], `,"resultType":"complete"}`...), nil
}

// pageToken is the go-sdk's cursor: the last URI of the page, gob-encoded
// under this type name, in URL-safe base64.
type pageToken struct {
	LastUID string
}

func encodeCursor(uri string) (string, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(pageToken{LastUID: uri}); err != nil {
		return "", fmt.Errorf("encode the page cursor: %w", err)
	}
	return base64.URLEncoding.EncodeToString(buf.Bytes()), nil
}

func decodeCursor(cursor string) (string, error) {
	b, err := base64.URLEncoding.DecodeString(cursor)
	if err != nil {
		return "", fmt.Errorf("decode the page cursor: %w", err)
	}
	var t pageToken
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&t); err != nil {
		return "", fmt.Errorf("decode the page cursor: %w", err)
	}
	return t.LastUID, nil
}
