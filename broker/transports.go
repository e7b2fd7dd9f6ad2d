package broker

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
	transportStdio = "stdio"     // the shim's bridge over the control socket
	transportHTTP  = "http"      // streamable HTTP
	transportSSE   = "sse"       // legacy SSE
	transportWS    = "websocket" // MCP over WebSocket
)

// transport is one way sessions reach a mount's MCP server. A mount has one
// mcp.Server for all of them: each HTTP handler below tags the context of
// its requests with its transport, the SDK hands that context to the
// server's middleware and tools, and the mount's sessionBook remembers
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
	handler func(tr *transport, srv *mcp.Server, d handlerDeps) http.Handler
}

// handlerDeps is what the transports' handlers share.
type handlerDeps struct {
	streamOpts *mcp.StreamableHTTPOptions // the shim route's streamable HTTP (`berth call`)
	streamable http.Handler               // /mcp: the mount's session table (streamable.Handler)
	book       *sessionBook
	log        *slog.Logger
}

// transports is the one list of Berth's MCP transports.
var transports = []*transport{
	{name: transportStdio, ide: true, handler: shimHandler},
	{
		name: transportHTTP, path: "/mcp", index: "streamable_http",
		opens:   func(r *http.Request) bool { return r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" },
		handler: func(_ *transport, _ *mcp.Server, d handlerDeps) http.Handler { return d.streamable },
	},
	{
		name: transportSSE, path: "/sse", index: transportSSE, stream: true,
		opens: func(r *http.Request) bool { return r.Method == http.MethodGet },
		handler: func(tr *transport, srv *mcp.Server, d handlerDeps) http.Handler {
			return queuedStreams(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil), d.log.With("transport", tr.name))
		},
	},
	{
		name: transportWS, path: "/ws", index: transportWS, stream: true,
		opens:   func(*http.Request) bool { return true },
		handler: wsHandler,
	},
}

// shimHandler serves the shim's bridge: a WebSocket upgrade (berth-shim),
// else streamable HTTP (`berth call` and the CLI).
func shimHandler(tr *transport, srv *mcp.Server, d handlerDeps) http.Handler {
	ws := wsHandler(tr, srv, d)
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, d.streamOpts)
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
func wsHandler(tr *transport, srv *mcp.Server, d handlerDeps) http.Handler {
	return mcpws.Handler(srv, d.log.With("transport", tr.name), func(ss *mcp.ServerSession) { d.book.tag(ss, tr) })
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

// transportNames lists every transport's name, in order.
func transportNames() []string {
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

// transportName is transportOf's name ("" when untagged), for the engine.
func transportName(ctx context.Context) string {
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
func (tr *transport) serve(srv *mcp.Server, d handlerDeps) http.Handler {
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
