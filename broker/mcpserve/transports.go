package mcpserve

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/finder"
	"github.com/berth-dev/berth/broker/mcpws"
	"github.com/berth-dev/berth/broker/outbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport names, as get_server_info, berth_sessions{transport} and the
// dashboard report them.
const (
	TransportStdio = "stdio"     // the shim's bridge over the control socket
	TransportHTTP  = "http"      // streamable HTTP
	TransportSSE   = "sse"       // legacy SSE
	TransportWS    = "websocket" // MCP over WebSocket
)

// transport is one way sessions reach a mount's MCP server. A mount has one
// mcp.Server for all of them: each HTTP handler below tags the context of
// its requests with its transport, the SDK hands that context to the
// server's middleware and tools, and the mount's Book remembers
// each session's transport. That is how get_server_info, the metrics, the session limits
// and the idle check tell the transports apart.
//
// A new transport is one entry here (and its handler).
type transport struct {
	name string
	// path is the transport's endpoint on the project's port; "" for the
	// shim's bridge, served on the control API at /projects/{id}/mcp.
	path string
	// index names the endpoint in the port's index document (GET /).
	index string
	// ide sessions come from the IDE through the shim: mcp.max_sessions
	// never counts them, and they are never evicted nor timed out.
	ide bool
	// stream sessions live on one long connection (SSE, WebSocket): they
	// are busy while it is open (limits.go), and a server/discover probe
	// opens one. (On /mcp such a probe gets a throwaway session.)
	stream bool
	// opens reports whether r, on path, would open a session: refused with
	// 503 while the project has mcp.max_sessions.
	opens func(r *http.Request) bool
	// handler serves the transport's sessions of srv.
	handler func(tr *transport, srv *mcp.Server, d HandlerDeps) http.Handler
}

// HandlerDeps is what the transports' handlers share.
type HandlerDeps struct {
	StreamOpts *mcp.StreamableHTTPOptions // the shim route's streamable HTTP (`berth call`)
	Streamable http.Handler               // /mcp: the mount's session table (streamable.Handler)
	Book       *Book
	Log        *slog.Logger
}

// Handlers are the handlers of every transport of srv: the port's, by
// path, and the shim's bridge (served on the control API).
func Handlers(srv *mcp.Server, d HandlerDeps) (byPath map[string]http.Handler, shim http.Handler) {
	byPath = make(map[string]http.Handler, len(transports))
	for _, tr := range transports {
		if tr.path == "" {
			shim = tr.serve(srv, d)
			continue
		}
		byPath[tr.path] = tr.serve(srv, d)
	}
	return byPath, shim
}

// Endpoints names each transport's path on a project port, for its index.
func Endpoints() map[string]string {
	out := make(map[string]string)
	for _, tr := range transports {
		if tr.path != "" {
			out[tr.index] = tr.path
		}
	}
	return out
}

// transports is the one list of Berth's MCP transports.
var transports = []*transport{
	{name: TransportStdio, ide: true, handler: shimHandler},
	{
		name: TransportHTTP, path: "/mcp", index: "streamable_http",
		opens:   func(r *http.Request) bool { return r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" },
		handler: func(_ *transport, _ *mcp.Server, d HandlerDeps) http.Handler { return d.Streamable },
	},
	{
		name: TransportSSE, path: "/sse", index: TransportSSE, stream: true,
		opens: func(r *http.Request) bool { return r.Method == http.MethodGet },
		handler: func(tr *transport, srv *mcp.Server, d HandlerDeps) http.Handler {
			return queuedStreams(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil), d.Log.With("transport", tr.name))
		},
	},
	{
		name: TransportWS, path: "/ws", index: TransportWS, stream: true,
		opens:   func(*http.Request) bool { return true },
		handler: wsHandler,
	},
}

// shimHandler serves the shim's bridge: a WebSocket upgrade (berth-shim),
// else streamable HTTP (`berth call` and the CLI).
func shimHandler(tr *transport, srv *mcp.Server, d HandlerDeps) http.Handler {
	ws := wsHandler(tr, srv, d)
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, d.StreamOpts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			ws.ServeHTTP(w, r)
			return
		}
		streamable.ServeHTTP(w, r)
	})
}

// wsHandler serves MCP over WebSocket, tagging each session as it
// connects: a WebSocket session may stay silent, and must still be known.
func wsHandler(tr *transport, srv *mcp.Server, d HandlerDeps) http.Handler {
	return mcpws.Handler(srv, d.Log.With("transport", tr.name), func(ss *mcp.ServerSession) { d.Book.tag(ss, tr) })
}

// queuedStreams serves each GET of h (a legacy SSE session's stream)
// through an outbox.Stream, so that a session that stops reading never
// holds up whoever notifies it; its context carries the session's
// outbox.Stats for the book.
func queuedStreams(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		stats := &outbox.Stats{}
		st := outbox.NewStream(w, r, stats, log)
		defer st.Close()
		h.ServeHTTP(st, r.WithContext(outbox.WithStats(st.Context(), stats)))
	})
}

// transportAt is the transport served at path on a project port, or nil.
func transportAt(path string) *transport {
	for _, tr := range transports {
		if tr.path != "" && tr.path == path {
			return tr
		}
	}
	return nil
}

// transportNamed is the transport called name (one of the transport… constants).
func transportNamed(name string) *transport {
	for _, tr := range transports {
		if tr.name == name {
			return tr
		}
	}
	panic("no transport " + name)
}

// TransportNames lists every transport's name, in order.
func TransportNames() []string {
	out := make([]string, len(transports))
	for i, tr := range transports {
		out[i] = tr.name
	}
	return out
}

type transportKey struct{}

// withTransport tags ctx with the transport its requests arrive on.
func withTransport(ctx context.Context, tr *transport) context.Context {
	return context.WithValue(ctx, transportKey{}, tr)
}

// transportOf is the transport ctx was tagged with, or nil.
func transportOf(ctx context.Context) *transport {
	tr, _ := ctx.Value(transportKey{}).(*transport)
	return tr
}

// TransportName is transportOf's name ("" when untagged), for the engine.
func TransportName(ctx context.Context) string {
	if tr := transportOf(ctx); tr != nil {
		return tr.name
	}
	return ""
}

// serve wraps the transport's handler so that every request's context
// carries the transport, and the tools listing its client asked for with
// ?tools=all|finder|auto (broker/finder): the SDK passes that context on
// to the session it opens and to the handlers of its messages. A tools=
// of another value is refused with 400, naming the values.
func (tr *transport) serve(srv *mcp.Server, d HandlerDeps) http.Handler {
	h := tr.handler(tr, srv, d)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode, err := finder.ParseMode(r.URL.Query().Get(api.ToolsParam))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r.WithContext(finder.WithMode(withTransport(r.Context(), tr), mode)))
	})
}
