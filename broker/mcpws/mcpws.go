// Package mcpws carries MCP over WebSocket: one JSON-RPC message per text
// frame, subprotocol "mcp" (as the TypeScript SDK's WebSocket transport does).
package mcpws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/berth-dev/berth/broker/outbox"
	"github.com/berth-dev/berth/broker/rpcmsg"
	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subprotocol is the WebSocket subprotocol MCP clients ask for.
const Subprotocol = "mcp"

// MaxMessageBytes caps one inbound message. A larger one (up to
// dropLimit) is answered with a JSON-RPC error and the session carries on;
// past dropLimit the connection is closed.
const MaxMessageBytes = 4 << 20

const dropLimit = 4 * MaxMessageBytes

// Handler serves MCP sessions of server over WebSocket upgrades. The
// request's context is the session's (server.Connect's), tagged with the
// session's outbox.Stats. onSession, if set, is called with each session
// as it connects. Each session's frames leave through an outbox.Queue:
// one that stops reading loses its notifications past outbox.Max, and
// its connection when answers pile up.
func Handler(server *mcp.Server, logger *slog.Logger, onSession func(*mcp.ServerSession)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
		if err != nil {
			logger.Debug("websocket accept failed", "err", err)
			return // Accept has answered the request
		}
		ws.SetReadLimit(dropLimit)
		stats := &outbox.Stats{}
		conn := newConn(ws)
		conn.out = outbox.New(outbox.Options{
			Send:  func(ctx context.Context, p []byte) error { return ws.Write(ctx, websocket.MessageText, p) },
			Cut:   func() { _ = ws.CloseNow() },
			Stats: stats,
			Log:   logger,
		})
		ss, err := server.Connect(outbox.WithStats(r.Context(), stats), transport{conn}, nil)
		if err != nil {
			logger.Warn("mcp over websocket: connect", "err", err)
			conn.Close()
			return
		}
		if onSession != nil {
			onSession(ss)
		}
		// Serve until the peer goes away; the HTTP handler must not return
		// before that, or the hijacked connection is torn down.
		_ = ss.Wait()
	})
}

// ClientTransport is an mcp.Transport that dials a WebSocket MCP endpoint.
type ClientTransport struct {
	URL        string
	HTTPClient *http.Client
	Header     http.Header
}

// Connect implements mcp.Transport.
func (t *ClientTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	ws, _, err := websocket.Dial(ctx, t.URL, &websocket.DialOptions{
		HTTPClient:   t.HTTPClient,
		HTTPHeader:   t.Header,
		Subprotocols: []string{Subprotocol},
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", t.URL, err)
	}
	ws.SetReadLimit(dropLimit)
	return newConn(ws), nil
}

type transport struct{ c *conn }

func (t transport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// conn adapts a WebSocket to mcp.Connection.
type conn struct {
	ws       *websocket.Conn
	out      *outbox.Queue   // the server's side: frames leave through it; nil = written at once
	ctx      context.Context // canceled by Close: unblocks Read
	cancel   context.CancelFunc
	writeMu  sync.Mutex
	closeErr error
	once     sync.Once

	// The peer's calls not answered yet, and those of them it cancelled
	// (notifications/cancelled): a cancelled call's answer is not sent,
	// as the MCP spec asks, though the go-sdk answers every call it
	// handles ("context canceled").
	callsMu   sync.Mutex
	open      map[jsonrpc.ID]bool
	withdrawn map[jsonrpc.ID]bool
}

func newConn(ws *websocket.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{ws: ws, ctx: ctx, cancel: cancel, open: map[jsonrpc.ID]bool{}, withdrawn: map[jsonrpc.ID]bool{}}
}

func (c *conn) SessionID() string { return "" }

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		rctx, stop := mergeCancel(ctx, c.ctx)
		typ, data, err := c.ws.Read(rctx)
		stop()
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusNormalClosure || errors.Is(err, context.Canceled) {
				return nil, mcp.ErrConnectionClosed
			}
			return nil, err
		}
		if typ != websocket.MessageText {
			continue // MCP messages are text; ignore binary frames
		}
		if len(data) > MaxMessageBytes {
			c.writeRaw(ctx, rpcError(-32600, fmt.Sprintf("message over %d bytes: send smaller messages", MaxMessageBytes)))
			continue
		}
		msg, err := rpcmsg.Decode(data) // not jsonrpc.DecodeMessage: see broker/rpcmsg
		if err != nil {
			// A malformed frame does not end the session: report it to the peer.
			c.writeRaw(ctx, rpcError(-32700, "parse error: "+err.Error()))
			continue
		}
		c.note(msg)
		return msg, nil
	}
}

// note keeps track of the peer's calls and of those it cancelled.
func (c *conn) note(msg jsonrpc.Message) {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.open[req.ID] = true
	} else if id, ok := rpcmsg.CancelledID(msg); ok && c.open[id] {
		c.withdrawn[id] = true
	}
}

// answers reports whether msg goes to the peer: false for the answer of a
// call it cancelled.
func (c *conn) answers(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return true
	}
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	delete(c.open, resp.ID)
	if c.withdrawn[resp.ID] {
		delete(c.withdrawn, resp.ID)
		return false
	}
	return true
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if !c.answers(msg) {
		return nil
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeRaw(ctx, data)
}

func (c *conn) writeRaw(ctx context.Context, data []byte) error {
	if c.out != nil {
		return c.out.Put(data)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.ws.Write(ctx, websocket.MessageText, data)
}

func (c *conn) Close() error {
	c.once.Do(func() {
		if c.out != nil {
			c.out.Stop()
		}
		c.closeErr = c.ws.Close(websocket.StatusNormalClosure, "")
		c.cancel()
	})
	return c.closeErr
}

// mergeCancel returns a context done when either a or b is done.
func mergeCancel(a, b context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(a)
	stop := context.AfterFunc(b, cancel)
	return ctx, func() { stop(); cancel() }
}

// rpcError is the JSON-RPC answer to a frame that is not a message.
func rpcError(code int, msg string) []byte {
	raw, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
	return raw
}
