// Package streamable serves MCP's streamable HTTP transport (POST, GET and
// DELETE on one path) from a session table Berth owns, around the go-sdk's
// [mcp.StreamableServerTransport] and [mcp.Server.Connect].
//
// The go-sdk's own handler keeps its table private and picks every session
// id itself. Owning the table is what lets the broker
//   - recreate a session under the id it had before a broker restart, from
//     the state the broker saved ([Options.Restore]);
//   - see each request of a session start and end ([Options.Track]): what
//     makes a session busy or idle;
//   - end a session so that its very next request gets 404 ([Handler.Close]);
//   - bound a JSON-RPC batch: its size, its answers' bytes, and its requests
//     one at a time ([MaxBatch], [Handler.Batches]).
//
// What the table does not see, the go-sdk still does: the transport parses,
// routes and streams every message, and requests that open no session (the
// server/discover probe of the 2026 protocol) go to the go-sdk's own handler.
package streamable

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/berth-dev/berth/broker/outbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Header names of the transport.
const (
	HeaderSessionID = "Mcp-Session-Id"
	headerVersion   = "Mcp-Protocol-Version"
)

// firstSessionless is the first protocol version without sessions: such
// requests are the go-sdk's business (it refuses them on a stateful server).
const firstSessionless = "2026-07-28"

// Options configures a Handler. Every func may be nil.
type Options struct {
	Logger *slog.Logger
	// EventStore keeps the events of each stream so that a client can resume
	// one with Last-Event-ID (see [mcp.EventStore]).
	EventStore mcp.EventStore
	// Restore returns the saved state of a session this table does not hold
	// (one a previous broker served), or false.
	Restore func(id string) (*mcp.ServerSessionState, bool)
	// Connected is told of each session as it is connected, with the request
	// that brought it, before any of its messages is handled. A restored
	// session it refuses (an error) is closed again and the request answered
	// by Refuse.
	Connected func(r *http.Request, ss *mcp.ServerSession, restored bool) error
	// Refuse answers a request whose restored session Connected refused.
	Refuse func(w http.ResponseWriter, err error)
	// Ended is told of each session that ended for good: DELETE, Close, or
	// a session whose first request did not initialize it. Sessions ended
	// by Shutdown are not (a broker that comes back may restore them).
	Ended func(id string)
	// Track is called as each request of a session starts, stream true for
	// a GET (a stream the client holds open); it returns the func called as
	// the request ends.
	Track func(ss *mcp.ServerSession, stream bool) (done func())
}

// Handler serves the streamable HTTP sessions of one server.
type Handler struct {
	srv   *mcp.Server
	opts  Options
	probe http.Handler // the go-sdk's handler, for requests that open no session

	mu       sync.Mutex // guards sessions and down
	sessions map[string]*entry
	down     bool
	watchers sync.WaitGroup // one per session in the table, until it ends; Shutdown waits for them

	fastCalls sync.Map                          // *mcp.RequestExtra -> *fastCall, while the fast path serves it (fast.go)
	chain     atomic.Pointer[mcp.MethodHandler] // the server's handling of a request, inside Middleware

	batchMu sync.Mutex // guards batches; apart from mu, never held with it
	batches map[string]*batch
}

type entry struct {
	ss    *mcp.ServerSession
	t     *mcp.StreamableServerTransport
	conn  *sessionConn
	ctx   context.Context // what the session's handlers get their values from (the go-sdk's: the connecting request's, not canceled with it)
	stats *outbox.Stats   // what its GET streams lost to a slow reader

	resumes atomic.Int64 // GETs with Last-Event-ID: its client resumed a stream (left.go)
}

// New returns a Handler for srv's sessions. Its fast path (fast.go) is on
// once srv has h.Middleware, added after every other receiving middleware.
func New(srv *mcp.Server, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{
		srv:      srv,
		opts:     opts,
		probe:    mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: opts.Logger}),
		sessions: make(map[string]*entry),
		batches:  make(map[string]*batch),
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get(headerVersion); v != "" && v < firstSessionless && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		http.Error(w, fmt.Sprintf("Bad Request: Unsupported protocol version (supported versions: %s)", strings.Join(mcp.SupportedProtocolVersions(), ",")), http.StatusBadRequest)
		return
	}
	id := r.Header.Get(HeaderSessionID)
	var body, one []byte // a POST's body; when it holds one message, for the fast path
	switch r.Method {
	case http.MethodPost:
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
			return
		}
		if json, stream := accepts(r.Header.Values("Accept")); !json || !stream {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
			return
		}
		var ok bool
		if body, ok = readBody(w, r); !ok {
			return
		}
		bid, b, ok := h.startBatch(w, r, body)
		if !ok {
			return
		}
		if b != nil {
			defer h.endBatch(bid, b)
			w = &batchWriter{ResponseWriter: w, b: b}
		}
		if id == "" {
			h.open(w, r, body)
			return
		}
		if oneMessage(body) {
			one = body
		}
	case http.MethodGet:
		if _, stream := accepts(r.Header.Values("Accept")); !stream {
			http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
			return
		}
		if id == "" {
			http.Error(w, "Bad Request: GET requires an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
	case http.MethodDelete:
		if id == "" {
			http.Error(w, "Bad Request: DELETE requires an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	e, answered := h.lookup(w, r, id)
	switch {
	case answered:
		return
	case e == nil:
		http.Error(w, "session not found", http.StatusNotFound)
		return
	case r.Method == http.MethodDelete:
		h.end(id, e, true)
		w.WriteHeader(http.StatusNoContent)
		return
	case one != nil:
		if h.fast(w, r, e, one) {
			return
		}
		w = &answerWriter{ResponseWriter: w}
	}
	if r.Method == http.MethodPost {
		defer h.watchPost(r, e, callIDs(body))()
	}
	h.serve(w, r, e)
}

// serve hands r to its session's transport, tracked. A GET stream's
// events go through a queue of its own (outbox), so that a client that
// stops reading it never holds up whoever notifies the session.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, e *entry) {
	if h.opts.Track != nil {
		done := h.opts.Track(e.ss, r.Method == http.MethodGet)
		defer done()
	}
	if r.Method == http.MethodGet {
		if r.Header.Get("Last-Event-ID") != "" {
			e.resumes.Add(1)
		}
		st := outbox.NewStream(w, r, e.stats, h.opts.Logger.With("transport", "http"))
		defer st.Close()
		w, r = st, r.WithContext(st.Context())
	}
	e.t.ServeHTTP(w, r)
}

// ReadBody is a request body already read into memory (see SetBody).
type ReadBody struct {
	*bytes.Reader
	data []byte
}

// Close implements [io.Closer].
func (*ReadBody) Close() error { return nil }

// SetBody gives r body, read already (by a handler in front of this one
// that checked it), as its body: the Handler takes it as it is instead of
// reading and copying it once more.
func SetBody(r *http.Request, body []byte) {
	r.Body = &ReadBody{Reader: bytes.NewReader(body), data: body}
	r.ContentLength = int64(len(body))
}

// readBody reads a POST's body (at most the go-sdk's limit) and leaves r
// with a copy to read again; on an error it answers r itself.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if b, ok := r.Body.(*ReadBody); ok && b.Len() == len(b.data) && int64(len(b.data)) <= mcp.DefaultMaxRequestBodyBytes {
		return b.data, true // unread: r reads it again as it is
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
	r.Body.Close()
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// open serves a POST without a session id: an initialize gets a new
// session; anything else (a server/discover probe) goes to the go-sdk.
func (h *Handler) open(w http.ResponseWriter, r *http.Request, body []byte) {
	if !initializes(body) {
		h.probe.ServeHTTP(w, r)
		return
	}
	if oneMessage(body) {
		w = &answerWriter{ResponseWriter: w}
	}
	id := rand.Text()
	e, err := h.connect(r, id, nil)
	if err != nil {
		h.opts.Logger.Error("connect a streamable HTTP session", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	if e == nil {
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	if h.opts.Connected != nil {
		_ = h.opts.Connected(r, e.ss, false) // a new session is admitted by its initialize
	}
	h.serve(w, r, e)
	if e.ss.InitializeParams() == nil {
		h.end(id, e, true) // its initialize failed: nobody can address it
	}
}

// lookup finds id's session, restoring it when it is unknown here but
// saved. answered is true when it has answered r itself.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, id string) (e *entry, answered bool) {
	h.mu.Lock()
	e, down := h.sessions[id], h.down
	h.mu.Unlock()
	if e != nil || down || h.opts.Restore == nil {
		return e, false
	}
	state, ok := h.opts.Restore(id)
	if !ok {
		return nil, false
	}
	if r.Method == http.MethodDelete {
		// Ending a session a previous broker served needs no session.
		if h.opts.Ended != nil {
			h.opts.Ended(id)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil, true
	}
	e, err := h.connect(r, id, state)
	if err != nil || e == nil {
		h.opts.Logger.Warn("restore a streamable HTTP session", "session", id, "err", err)
		return nil, false
	}
	if h.opts.Connected != nil {
		if err := h.opts.Connected(r, e.ss, true); err != nil {
			h.end(id, e, false) // refused for now; it may come back later
			if h.opts.Refuse != nil {
				h.opts.Refuse(w, err)
			} else {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
			}
			return nil, true
		}
	}
	h.opts.Logger.Info("streamable HTTP session restored", "session", id)
	return e, false
}

// connect makes a session with id (and state, when restoring) and adds it
// to the table; nil when shutting down. Of two restores of one id, the
// first to reach the table wins and the other is closed.
func (h *Handler) connect(r *http.Request, id string, state *mcp.ServerSessionState) (*entry, error) {
	t := &sessionTransport{sdk: &mcp.StreamableServerTransport{SessionID: id, EventStore: h.opts.EventStore}}
	var opts *mcp.ServerSessionOptions
	if state != nil {
		opts = &mcp.ServerSessionOptions{State: state}
	}
	// The request's context carries what the broker's middleware reads
	// (the transport, the session's outbox.Stats); the SDK detaches it
	// from the request's end.
	stats := &outbox.Stats{}
	stats.SetLabel(id)
	ctx := outbox.WithStats(r.Context(), stats)
	ss, err := h.srv.Connect(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	e := &entry{ss: ss, t: t.sdk, conn: t.conn, ctx: context.WithoutCancel(ctx), stats: stats}
	h.mu.Lock()
	other, down := h.sessions[id], h.down
	if other == nil && !down {
		h.sessions[id] = e
		h.watchers.Add(1)
	}
	h.mu.Unlock()
	if other != nil || down {
		ss.Close()
		return other, nil
	}
	go func() {
		defer h.watchers.Done()
		_ = ss.Wait() // ended by the client's transport or by Close
		h.mu.Lock()
		if h.sessions[id] == e {
			delete(h.sessions, id)
		}
		h.mu.Unlock()
	}()
	return e, nil
}

// end removes e from the table, closes it and, when final, reports it ended.
func (h *Handler) end(id string, e *entry, final bool) {
	h.mu.Lock()
	if h.sessions[id] == e {
		delete(h.sessions, id)
	}
	h.mu.Unlock()
	e.ss.Close()
	if final && h.opts.Ended != nil {
		h.opts.Ended(id)
	}
}

// Close ends session id for good: its next request gets 404. It reports
// whether the table held it.
func (h *Handler) Close(id string) bool {
	h.mu.Lock()
	e := h.sessions[id]
	h.mu.Unlock()
	if e == nil {
		return false
	}
	h.end(id, e, true)
	return true
}

// Shutdown closes every session without reporting them ended, and serves
// no more: the broker is stopping or unmounting the project, and a broker
// that serves it again may restore them. It returns once the goroutine
// watching each session has (a session's Close waits for its requests).
func (h *Handler) Shutdown() {
	h.mu.Lock()
	h.down = true
	es := make([]*entry, 0, len(h.sessions))
	for id, e := range h.sessions {
		es = append(es, e)
		delete(h.sessions, id)
	}
	h.mu.Unlock()
	for _, e := range es {
		e.ss.Close()
	}
	h.watchers.Wait()
}

// accepts reports whether Accept values admit JSON and an event stream.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for _, raw := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// initializes reports whether a POST body holds an initialize request.
func initializes(body []byte) bool {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &batch) == nil {
		return slices.ContainsFunc(batch, func(m struct {
			Method string `json:"method"`
		}) bool {
			return m.Method == "initialize"
		})
	}
	return false
}
