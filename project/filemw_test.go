package project

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder keeps the bodies of the HTTP answers a client receives.
type recorder struct {
	bodies [][]byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var call []byte
	if req.Body != nil {
		var err error
		if call, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(call))
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !bytes.Contains(call, []byte(`"method":"resources/`)) {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	r.bodies = append(r.bodies, body)
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// answers are the JSON-RPC answers (results and errors, not notifications)
// in the recorded bodies, each as its raw result or error, in order.
func (r *recorder) answers(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, body := range r.bodies {
		var msgs [][]byte
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
			msgs = append(msgs, body)
		} else {
			sc := bufio.NewScanner(bytes.NewReader(body))
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
					msgs = append(msgs, bytes.Clone(data))
				}
			}
		}
		for _, m := range msgs {
			var msg struct {
				ID     json.RawMessage
				Method string
				Result json.RawMessage
				Error  json.RawMessage
			}
			if err := json.Unmarshal(m, &msg); err != nil {
				t.Fatalf("answer %q: %v", m, err)
			}
			if msg.ID != nil && msg.Method == "" {
				out = append(out, cursorRE.ReplaceAllStringFunc(string(msg.Result)+string(msg.Error), func(c string) string {
					uri, err := decodeCursor(cursorRE.FindStringSubmatch(c)[1])
					if err != nil {
						t.Fatalf("cursor %s: %v", c, err)
					}
					return `"nextCursor":` + uri
				}))
			}
		}
	}
	return out
}

// cursorRE finds a page cursor in an answer. A cursor is the go-sdk's
// encoding of the page's last URI, but the bytes of that encoding depend
// on the types encoded before in the process (gob numbers them): answers
// are compared with their cursors decoded.
var cursorRE = regexp.MustCompile(`"nextCursor":"([^"]*)"`)

// serveMCP serves s over streamable HTTP on a loopback port until the test
// ends, and returns its URL.
func serveMCP(t *testing.T, s *mcp.Server, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)}
	return serveOn(t, srv)
}

// TestFileResourcesAnswerAsTheSDKWould lists (in pages) and reads a
// project's standards, with resources of the go-sdk's own among them, on
// the project's server and on a plain go-sdk server holding each file as a
// resource of its own, in both the MCP versions whose answers differ, and
// wants the same bytes from both.
func TestFileResourcesAnswerAsTheSDKWould(t *testing.T) {
	const n = mcp.DefaultPageSize + 150 // two pages
	root := t.TempDir()
	std := filepath.Join(root, ".praxis-os", "standards")
	for i := range n {
		body := fmt.Sprintf("# Rule %d\n\nText of rule %d.\n", i, i)
		if i%7 == 0 {
			body = fmt.Sprintf("---\ntitle: Titled %d\n---\nRule %d.\n", i, i)
		}
		name := fmt.Sprintf("r%04d.md", i)
		if i%50 == 0 {
			name = fmt.Sprintf("sub dir/r %04d ü.md", i) // escaped in the URI
		}
		writeFile(t, filepath.Join(std, name), body)
	}
	e := openEngine(t, root)
	brokertest.Eventually(t, "every file served", func() bool { return len(e.current().catalog.table()) == n })

	// The reference: each file a resource of its own, as the catalog
	// published them before it served them itself.
	ref := mcp.NewServer(&mcp.Implementation{Name: "berth", Title: "Berth: " + e.name, Version: e.server.Version}, nil)
	for _, f := range e.current().index.Files() {
		uri := fileURI(filepath.Join(root, filepath.FromSlash(f.Path)))
		ref.AddResource(&mcp.Resource{URI: uri, Name: f.Path, Title: resourceTitle(f),
			Description: "Project standard (markdown) at " + f.Path, MIMEType: "text/markdown", Size: f.Size},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return e.current().catalog.read(uri, f.Path)
			})
	}
	// Resources of the go-sdk's own: one among the files, one after them.
	for _, s := range []*mcp.Server{e.Server(), ref} {
		for _, uri := range []string{fileURI(filepath.Join(std, "r0500.md.extra")), "note://1"} {
			s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "own"}}}, nil
			})
		}
	}
	// MCP 2026-07-28 is served stateless only.
	for _, version := range []string{"2025-11-25", newProtocol} {
		opts := &mcp.StreamableHTTPOptions{Stateless: version == newProtocol}
		var got [2][]string
		for k, url := range []string{serveMCP(t, e.Server(), opts), serveMCP(t, ref, opts)} {
			rec := &recorder{}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rec}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, page := range listPages(ctx, t, cs) {
				for _, r := range page {
					uris = append(uris, r.URI)
				}
			}
			if len(uris) != n+2 {
				t.Fatalf("version %s, server %d: listed %d resources, want %d", version, k, len(uris), n+2)
			}
			for _, uri := range []string{uris[0], uris[len(uris)/2], uris[len(uris)-2], uris[len(uris)-1], fileURI(filepath.Join(std, "missing.md"))} {
				cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			}
			if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "not a cursor"}); err == nil {
				t.Errorf("version %s, server %d: a bad cursor is taken", version, k)
			}
			cs.Close()
			cancel()
			got[k] = rec.answers(t)
		}
		if len(got[0]) != len(got[1]) {
			t.Fatalf("version %s: %d answers from the project, %d from the go-sdk", version, len(got[0]), len(got[1]))
		}
		for i := range got[0] {
			if got[0][i] != got[1][i] {
				t.Errorf("version %s, answer %d:\nproject: %.600s\ngo-sdk:  %.600s", version, i, got[0][i], got[1][i])
			}
		}
		if version == newProtocol && !strings.Contains(strings.Join(got[0], ""), `"resultType":"complete"`) {
			t.Errorf("version %s: no answer says its result type", version)
		}
	}
}

// TestCursorIsTheSDKs: the go-sdk reads the catalog's cursor as its own,
// and the catalog reads the go-sdk's (their bytes differ: see cursorRE).
func TestCursorIsTheSDKs(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{PageSize: 1})
	for _, uri := range []string{"file:///a", "file:///b", "file:///c"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, nil)
	}
	ctx := context.Background()
	cs := connectServer(t, s, nil)
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if uri, err := decodeCursor(res.NextCursor); err != nil || uri != "file:///a" {
		t.Fatalf("the go-sdk's cursor reads %q, %v", uri, err)
	}
	mine, err := encodeCursor("file:///b")
	if err != nil {
		t.Fatal(err)
	}
	res, err = cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: mine})
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != "file:///c" {
		t.Fatalf("the go-sdk's page after the catalog's cursor: %+v, %v", res, err)
	}
}

// FuzzCursor: any URI comes back from its cursor, and no cursor makes
// decoding fail other than with an error.
func FuzzCursor(f *testing.F) {
	f.Add("file:///a/b.md", "")
	f.Add("", "Iv+BAwEBCXBhZ2VUb2tlbgH/ggABAQEHTGFzdFVJRAEMAAAA")
	f.Add("berth://catalog/list-changed", "%%%")
	f.Fuzz(func(t *testing.T, uri, cursor string) {
		c, err := encodeCursor(uri)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := decodeCursor(c); err != nil || got != uri {
			t.Fatalf("%q comes back as %q, %v", uri, got, err)
		}
		decodeCursor(cursor)
	})
}

// FuzzURIOf: a file's URI made from the root's is the URI of its absolute
// path, and plain paths sort as their URIs do, under a root whose own URI
// escapes.
func FuzzURIOf(f *testing.F) {
	for _, seed := range [][2]string{{"a/b.md", "a/c.md"}, {"sub dir/r ü.md", "sub!dir/x.md"}, {"../x", "./y"}, {"a//b", "a/./b"}, {"", "."}, {"a~b/-_.md", "a/b/"}} {
		f.Add(seed[0], seed[1])
	}
	root := filepath.Join(f.TempDir(), "a b ü%")
	c := &catalog{root: root, uriPrefix: uriPrefix(root)}
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, ub := fileURI(filepath.Join(root, filepath.FromSlash(a))), fileURI(filepath.Join(root, filepath.FromSlash(b)))
		if got := c.uriOf(a); got != ua {
			t.Fatalf("uriOf(%q) = %q, want %q", a, got, ua)
		}
		if got, want := c.compareURI(a, ub), strings.Compare(ua, ub); got != want {
			t.Fatalf("compareURI(%q, %q) = %d, want %d", a, ub, got, want)
		}
		files := []fileEntry{{path: a}, {path: b}}
		c.sortByURI(files)
		if u0, u1 := c.uriOf(files[0].path), c.uriOf(files[1].path); u0 > u1 {
			t.Fatalf("sorted %q before %q", u0, u1)
		}
	})
}

// FuzzListMerge: the files of a catalog merged into a go-sdk server's own
// resources list, page after page, as a go-sdk server holding all of them
// as resources lists them, at any page size; the placeholder that
// listChanged adds and removes is never listed, and nothing is missed
// while it is there.
func FuzzListMerge(f *testing.F) {
	f.Add([]byte{3, 0, 1, 2, 3, 4, 5, 6}, uint8(2))
	f.Add([]byte{0, 9, 9, 200, 7}, uint8(1))
	f.Add([]byte{1}, uint8(0))
	root := filepath.Join(f.TempDir(), "r t")
	f.Fuzz(func(t *testing.T, picks []byte, size uint8) {
		pageSize := int(size%5) + 1
		c := &catalog{root: root, uriPrefix: uriPrefix(root)}
		ref := mcp.NewServer(&mcp.Implementation{Name: "ref", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
		s := mcp.NewServer(&mcp.Implementation{Name: "ref", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "resources/list" {
					return c.list(ctx, next, method, req, pageSize)
				}
				return next(ctx, method, req)
			}
		})
		// Each pick names a file (even) or a resource of the server's own
		// (odd); the two share names, so their URIs interleave.
		var table []fileEntry
		seen := map[string]bool{}
		for _, p := range picks {
			name := fmt.Sprintf("d%d/f %d.md", p%3, p/2)
			if p%5 == 0 {
				name = fmt.Sprintf("d%d/f%d.md", p%3, p/2) // a plain path
			}
			uri := c.uriOf(name)
			if seen[uri] {
				continue
			}
			seen[uri] = true
			if p%2 == 0 {
				e := fileEntry{path: name, title: "t", size: int64(p)}
				table = append(table, e)
				ref.AddResource(e.resource(uri), nil)
				continue
			}
			r := &mcp.Resource{URI: uri + "#own", Name: "own"}
			s.AddResource(r, nil)
			ref.AddResource(r, nil)
		}
		c.sortByURI(table)
		c.files = &fileTable{files: table}
		want := listAll(t, ref)
		if got := listAll(t, s); got != want {
			t.Fatalf("page size %d:\nmerged:  %s\nthe sdk: %s", pageSize, got, want)
		}
		// While the placeholder is there a page may be one short; the
		// list is the same.
		s.AddResource(&mcp.Resource{URI: listChangedURI, Name: "list-changed"}, nil)
		if got := listAll(t, s); strings.ReplaceAll(got, "\n", "") != strings.ReplaceAll(want, "\n", "") {
			t.Fatalf("page size %d, with the placeholder:\nmerged:  %s\nthe sdk: %s", pageSize, got, want)
		}
	})
}

// listAll lists every resource of s page by page, each page's resources
// on a line of their own.
func listAll(t *testing.T, s *mcp.Server) string {
	t.Helper()
	var b strings.Builder
	for _, page := range listPages(context.Background(), t, connectServer(t, s, nil)) {
		for _, r := range page {
			data, _ := json.Marshal(r)
			b.Write(data)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// listPages lists every resource of cs's server, page by page.
func listPages(ctx context.Context, t *testing.T, cs *mcp.ClientSession) [][]*mcp.Resource {
	t.Helper()
	var pages [][]*mcp.Resource
	cursor := ""
	for {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, res.Resources)
		if cursor = res.NextCursor; cursor == "" {
			return pages
		}
	}
}
