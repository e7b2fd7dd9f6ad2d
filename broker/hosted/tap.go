package hosted

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tapTransport wraps a stdio server's connection to count progress
// notifications in the order they arrive, before the SDK queues them
// behind the call's result (see caller.seen).
type tapTransport struct {
	mcp.Transport
	calls *callers
}

func (t *tapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tapConn{Connection: conn, calls: t.calls}, nil
}

type tapConn struct {
	mcp.Connection
	calls *callers
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "notifications/progress" {
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if tok, ok := p.Token.(string); ok {
				c.calls.sawProgress(tok)
			}
		}
	}
	return msg, err
}
