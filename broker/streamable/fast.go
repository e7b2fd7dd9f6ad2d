package streamable

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/berth-dev/berth/broker/rawresult"
	"github.com/berth-dev/berth/broker/rpcmsg"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path. The go-sdk decodes every POST six times over (its
// transport: as a batch, as a message, its method, its _meta; its session:
// the _meta again, the params), each through a decoder that starts with a
// 32 KiB buffer: most of the garbage of a busy project port. A POST that
// holds one plain call on a session of the table (what sub-agents send,
// call after call) is decoded here instead (broker/rpcmsg) and answered
// here: its answer alone as one application/json body, or, when the server
// sends notifications or requests about the call first, an SSE stream that
// ends with the answer, as the go-sdk's transport answers through
// answerWriter. A tools/call is run here, through the server's receiving
// middleware and its tool (Handler.Middleware holds that chain), with its
// params decoded here too; another plain call is handed to the session
// decoded.
// Its events are kept in the event store under ids of the go-sdk's form,
// so a client whose stream broke resumes it with a GET as from the go-sdk.
// Everything else goes through the go-sdk: batches, notifications,
// responses, initialize, GET.

// fastMethods are the calls the fast path takes, each true when it needs
// params. They are the server's own methods (so the go-sdk's transport
// would admit them too).
var fastMethods = map[string]bool{
	"tools/call": true, "resources/read": true, "prompts/get": true, "completion/complete": true,
	"tools/list": false, "prompts/list": false, "resources/list": false, "resources/templates/list": false, "ping": false,
}

// sessionTransport is the go-sdk's transport of one session with the fast
// path beside it.
type sessionTransport struct {
	sdk  *mcp.StreamableServerTransport
	conn *sessionConn // set by Connect
}

func (t *sessionTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inner, err := t.sdk.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = newSessionConn(inner)
	return t.conn, nil
}

// SupportsProtocolVersion is the go-sdk transport's.
func (t *sessionTransport) SupportsProtocolVersion(v string) bool {
	return t.sdk.SupportsProtocolVersion(v)
}

// sessionConn is the session's connection: what the go-sdk's transport
// reads and what the fast path decoded go to the session in the order they
// arrive; what the session writes about a fast call goes to that call's
// POST, everything else to the go-sdk's transport.
type sessionConn struct {
	sdk    mcp.Connection
	in     chan jsonrpc.Message // unbuffered: the session reads at its pace
	ended  chan struct{}        // the go-sdk's side read its last message; err says why
	err    error
	closed chan struct{}
	once   sync.Once

	mu     sync.Mutex
	calls  map[jsonrpc.ID]*fastCall     // fast calls not answered yet
	posted map[jsonrpc.ID]chan struct{} // calls whose POSTs wait for their answers, closed by the answer (left.go)
}

func newSessionConn(sdk mcp.Connection) *sessionConn {
	c := &sessionConn{sdk: sdk, in: make(chan jsonrpc.Message), ended: make(chan struct{}),
		closed: make(chan struct{}), calls: map[jsonrpc.ID]*fastCall{}, posted: map[jsonrpc.ID]chan struct{}{}}
	go c.pump()
	return c
}

// pump passes on what the go-sdk's transport reads, until it ends.
func (c *sessionConn) pump() {
	for {
		msg, err := c.sdk.Read(context.Background()) // ends with Close: the transport's Read returns EOF
		if err != nil {
			c.err = err
			close(c.ended)
			return
		}
		c.cancelled(msg)
		select {
		case c.in <- msg:
		case <-c.closed:
			return
		}
	}
}

// cancelled cancels a tools/call run here when msg is the client's
// notifications/cancelled for it (the session does that for its own).
func (c *sessionConn) cancelled(msg jsonrpc.Message) {
	id, ok := rpcmsg.CancelledID(msg)
	if !ok {
		return
	}
	c.mu.Lock()
	fc := c.calls[id]
	if fc != nil {
		fc.withdrawn = true
	}
	c.mu.Unlock()
	if fc != nil && fc.cancel != nil {
		fc.cancel()
	}
}

func (c *sessionConn) SessionID() string { return c.sdk.SessionID() }

func (c *sessionConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-c.in:
		return msg, nil
	case <-c.ended:
		return nil, c.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *sessionConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var fc *fastCall
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if fc = c.calls[resp.ID]; fc != nil {
			delete(c.calls, resp.ID)
		}
		c.answered(resp.ID)
		c.mu.Unlock()
	} else if v, ok := ctx.Value(fastKey{}).(*fastCall); ok && v.conn == c {
		fc = v
	}
	if fc != nil && fc.write(msg) {
		return nil
	}
	return c.sdk.Write(ctx, msg)
}

func (c *sessionConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.mu.Lock()
		for _, fc := range c.calls {
			if fc.cancel != nil {
				fc.cancel()
			}
		}
		c.mu.Unlock()
	})
	return c.sdk.Close()
}

// fastKey marks a fast call's context (Handler.tag) so that what the
// session sends about the call reaches its POST.
type fastKey struct{}

// fastCall is one call the fast path handed to the session.
type fastCall struct {
	conn     *sessionConn
	id       jsonrpc.ID
	answered chan struct{}
	cancel   context.CancelFunc // a tools/call run here: the client cancelled it, or the session ended
	// withdrawn: the client cancelled the call (notifications/cancelled),
	// so it gets no answer, as the MCP spec asks; c.mu guards it.
	withdrawn bool
	store     mcp.EventStore // nil: events carry no id
	session   string
	stream    string // its stream's id in store; "" until its first event that is not the answer (send)

	mu       sync.Mutex // guards w, finished and last
	w        *answerWriter
	finished bool // its POST was answered or its client left
	last     int  // index of the last event stored
}

// write sends msg on the call's POST; false once the POST is over (a
// notification then goes where the go-sdk sends those of a finished
// request; an answer nobody waits for is dropped).
func (fc *fastCall) write(msg jsonrpc.Message) bool {
	_, answer := msg.(*jsonrpc.Response)
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return answer
	}
	return fc.send(data, answer)
}

// send is write with msg encoded (data), answer true for a response.
//
// The call's stream is opened in the event store with its first event
// that is not the answer: only a client that got an event id can resume
// the stream, and an answer with nothing before it leaves as one
// application/json body, without an id. Such a call (most of them) costs
// the store nothing and pushes none of the session's other streams out of
// it (MaxStreams).
func (fc *fastCall) send(data []byte, answer bool) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if !answer && !fc.finished && fc.store != nil && fc.stream == "" {
		if id := rand.Text(); fc.store.Open(context.Background(), fc.session, id) == nil {
			fc.stream = id
		} else {
			fc.store = nil
		}
	}
	stored := false
	if fc.stream != "" && (!fc.finished || answer) {
		// An answer is stored even when its client left: it may resume.
		stored = fc.store.Append(context.Background(), fc.session, fc.stream, data) == nil
		if stored {
			fc.last++
		}
	}
	if fc.finished {
		return answer
	}
	if answer && !fc.w.started {
		fc.finished = true
		close(fc.answered)
		_ = fc.w.answer(data) // the client may have left: nothing more to do
		return true
	}
	event := make([]byte, 0, len("event: message\nid: _\ndata: \n\n")+len(fc.stream)+20+len(data))
	event = append(event, "event: message\n"...)
	if stored {
		event = fmt.Appendf(event, "id: %s_%d\n", fc.stream, fc.last)
	}
	event = append(append(append(event, "data: "...), data...), "\n\n"...)
	if _, err := fc.w.Write(event); err != nil {
		fc.finished = true
		return answer
	}
	if answer {
		fc.finished = true
		close(fc.answered)
	} else {
		_ = fc.w.FlushError()
	}
	return true
}

// end ends the call's POST without an answer: the client cancelled the
// call.
func (fc *fastCall) end() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if !fc.finished {
		fc.finished = true
		close(fc.answered)
	}
}

func (fc *fastCall) finish() {
	fc.mu.Lock()
	fc.finished = true
	fc.mu.Unlock()
}

// fast serves r (a POST of one message, body) on e's session when it is a
// plain call; false leaves it to the go-sdk.
func (h *Handler) fast(w http.ResponseWriter, r *http.Request, e *entry, body []byte) bool {
	c, chain := e.conn, h.chain.Load()
	if c == nil || chain == nil || !fastRequest(r.Header) {
		return false
	}
	msg, err := rpcmsg.Decode(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || !plainCall(req) {
		return false
	}
	var params *mcp.CallToolParamsRaw
	if req.Method == "tools/call" {
		// Run here only what the session would run as is: an initialized
		// session's call whose params read as the go-sdk reads them.
		if params, ok = callParams(req.Params); !ok || e.ss.InitializeParams() == nil {
			params = nil
		}
	}
	fc := &fastCall{conn: c, id: req.ID, answered: make(chan struct{}), last: -1}
	if h.opts.EventStore != nil {
		fc.store, fc.session = h.opts.EventStore, c.SessionID() // its stream is opened by its first event (send)
	}
	c.mu.Lock()
	dup := c.calls[req.ID] != nil
	if !dup {
		c.calls[req.ID] = fc
	}
	c.mu.Unlock()
	if dup {
		writeRPCError(w, http.StatusBadRequest, req.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("duplicate in-flight request ID %v", req.ID.Raw()))
		return true
	}
	left := h.watchPost(r, e, []jsonrpc.ID{req.ID})
	defer left()
	extra := &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}
	req.Extra = extra
	if h.opts.Track != nil {
		done := h.opts.Track(e.ss, false)
		defer done()
	}
	// A lone answer leaves as an application/json body; a stream gets the
	// headers of the go-sdk's SSE answer as it starts.
	fc.w = &answerWriter{ResponseWriter: w, streamHeaders: true}
	if params != nil {
		h.runTool(r, e, fc, *chain, params, extra, left)
		return true
	}
	// Middleware tags the call's context for the session (runTool's
	// context carries the tag itself).
	h.fastCalls.Store(extra, fc)
	defer h.fastCalls.Delete(extra)
	select {
	case c.in <- req:
	case <-c.closed:
		c.forget(fc)
		http.Error(w, "session is closing", http.StatusNotFound)
		return true
	case <-c.ended:
		c.forget(fc)
		http.Error(w, "session is closing", http.StatusNotFound)
		return true
	}
	select {
	case <-fc.answered:
	case <-r.Context().Done(): // the client left: the call is cancelled unless it resumes (left.go)
	case <-c.closed:
	case <-c.ended:
	}
	fc.finish()
	return true
}

// forget drops a call the session never got.
func (c *sessionConn) forget(fc *fastCall) {
	c.mu.Lock()
	if c.calls[fc.id] == fc {
		delete(c.calls, fc.id)
	}
	c.mu.Unlock()
	fc.finish()
}

// fastRequest reports whether a POST's headers leave nothing for the
// go-sdk's transport to check: a protocol before the sessionless one (whose
// Mcp-Method and Mcp-Name headers the go-sdk checks against the body) and
// no Last-Event-ID.
func fastRequest(h http.Header) bool {
	if v := h.Get(headerVersion); v >= firstSessionless {
		return false
	}
	for name := range h {
		if name == "Last-Event-Id" || strings.HasPrefix(name, "Mcp-") && name != HeaderSessionID && name != headerVersion {
			return false
		}
	}
	return true
}

// plainCall reports whether req is a call the fast path takes: one of
// fastMethods, with params when it needs them, and no per-request
// protocol keys in its _meta (the go-sdk's transport checks those).
func plainCall(req *jsonrpc.Request) bool {
	needs, ok := fastMethods[req.Method]
	if !ok || !req.IsCall() {
		return false
	}
	if p := bytes.TrimSpace(req.Params); needs && (len(p) == 0 || p[0] != '{') {
		return false
	}
	return !bytes.Contains(req.Params, []byte("io.modelcontextprotocol/"))
}

// Middleware is the server's receiving middleware the fast path needs:
// add it after every other (the fast path runs tools/call through what it
// wraps, so a middleware added after it would be skipped there). It marks
// the context of a call handed to the session, so that the notifications
// and requests the server sends about it go to its POST (the go-sdk finds
// a request's stream by a context key only its own transport can set).
func (h *Handler) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	h.chain.Store(&next)
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if extra := req.GetExtra(); extra != nil {
			if fc, ok := h.fastCalls.Load(extra); ok {
				ctx = context.WithValue(ctx, fastKey{}, fc)
			}
		}
		return next(ctx, method, req)
	}
}

// writeRPCError answers a POST with a JSON-RPC error, as the go-sdk does.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		http.Error(w, message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// runTool runs a tools/call on e's session here, in the POST's own
// goroutine: through chain (the server's receiving middleware and its
// tool), with the context the session gives its handlers, cancelled by the
// client's notifications/cancelled or the session's end; the answer (or
// the error, as the go-sdk encodes it) goes to the call's POST. When the
// client leaves first, left (the POST's watchPost) is run then, as the
// POST would run it when over, so that the call is cancelled after
// ResumeGrace unless the client resumes; the answer is kept for a resume.
// (A goroutine of its own for the tool, with the POST waiting for it, cost
// two goroutine switches a call.)
func (h *Handler) runTool(r *http.Request, e *entry, fc *fastCall, chain mcp.MethodHandler, params *mcp.CallToolParamsRaw, extra *mcp.RequestExtra, left func()) {
	ctx, cancel := context.WithCancel(context.WithValue(e.ctx, fastKey{}, fc))
	defer cancel()
	var slot *rawresult.Slot
	if v := e.ss.InitializeParams().ProtocolVersion; v < firstSessionless {
		// (On the sessionless protocol the go-sdk adds a resultType to
		// the result after the tool returns it.)
		ctx, slot = rawresult.With(ctx)
	}
	fc.conn.mu.Lock()
	fc.cancel = cancel
	fc.conn.mu.Unlock()
	select {
	case <-fc.conn.closed:
		cancel()
	default:
	}
	stop := context.AfterFunc(r.Context(), func() {
		fc.finish()
		left()
	})
	defer stop()
	res, err := chain(ctx, "tools/call", &mcp.CallToolRequest{Session: e.ss, Params: params, Extra: extra})
	resp := &jsonrpc.Response{ID: fc.id, Error: err}
	var passed []byte // the answer with a forwarded result as its server wrote it
	switch {
	case err != nil: // a result beside an error is dropped, as the go-sdk drops it
	case res == nil:
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call returned a nil result and nil error"}
	default:
		if raw, ok := slot.Bytes(res); ok {
			passed = answerWith(fc.id, raw)
		} else if raw, err := marshalResult(res); err != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tools/call returned a malformed result: %v", err)}
		} else {
			// Compact, on one line: jsonrpc.EncodeMessage would only
			// check and copy it once more.
			passed = answerWith(fc.id, raw)
		}
	}
	fc.conn.mu.Lock()
	delete(fc.conn.calls, fc.id)
	fc.conn.answered(fc.id)
	withdrawn := fc.withdrawn
	fc.conn.mu.Unlock()
	if withdrawn {
		fc.end() // the go-sdk would answer "context canceled"; the client asked for no answer
		return
	}
	if passed != nil {
		fc.send(passed, true)
	} else {
		fc.write(resp)
	}
	fc.finish()
}

// answerWith is the answer to call id with result (valid JSON on one
// line), as jsonrpc.EncodeMessage writes it, without checking and copying
// result once more.
func answerWith(id jsonrpc.ID, result json.RawMessage) []byte {
	var n []byte
	switch v := id.Raw().(type) {
	case int64:
		n = strconv.AppendInt(nil, v, 10)
	default: // a string, escaped as the go-sdk escapes it (no HTML escapes)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v) // a string always encodes
		n = bytes.TrimRight(buf.Bytes(), "\n")
	}
	data := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(n)+len(result))
	data = append(append(append(data, `{"jsonrpc":"2.0","id":`...), n...), `,"result":`...)
	return append(append(data, result...), '}')
}

// callParams reads tools/call params as the go-sdk does (members matched
// exactly, unknown ones ignored); false for what it should read itself:
// anything malformed, and the sessionless protocol's members.
func callParams(raw json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	var arr [4]rpcmsg.Member
	plain, ok := rpcmsg.Members(raw, arr[:0]) // raw is the request's own: its members may stay in it
	if !ok {
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil || members == nil {
			return nil, false
		}
		plain = plain[:0]
		for name, v := range members {
			plain = append(plain, rpcmsg.Member{Name: []byte(name), Value: v})
		}
	}
	p := &mcp.CallToolParamsRaw{}
	for _, m := range plain {
		var err error
		switch string(m.Name) {
		case "name":
			var ok bool
			if p.Name, ok = rpcmsg.PlainString(m.Value); !ok {
				err = json.Unmarshal(m.Value, &p.Name)
			}
		case "arguments":
			p.Arguments = m.Value
		case "_meta":
			err = json.Unmarshal(m.Value, &p.Meta)
		case "inputResponses", "requestState":
			return nil, false
		}
		if err != nil {
			return nil, false
		}
	}
	return p, true
}

// marshalResult encodes a result as the go-sdk's JSON-RPC layer does. A
// tool's result encodes itself with json.Marshal (compact, characters
// HTML escapes already escaped), which the layer's encoder would only
// check and copy again: taken as it is. Its error, if any, is left to
// the encoder to word.
func marshalResult(res mcp.Result) (json.RawMessage, error) {
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
		if data, err := r.MarshalJSON(); err == nil {
			return data, nil
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
