package mcpserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
	"github.com/berth-dev/berth/broker/streamable"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxBodyBytes caps one HTTP message body on a project port (the go-sdk's default).
const MaxBodyBytes = mcp.DefaultMaxRequestBodyBytes

// ReadTimeout bounds how long a client of a project port may take to send
// a request's headers, and then its body (a POST's): a stalled body is
// answered 408 and its connection closed. Nothing bounds how long an
// answer may take, so SSE and GET streams last as long as they need.
const ReadTimeout = 10 * time.Second

// CheckPosts answers a POST whose body is over MaxBodyBytes with 413, one
// whose body does not arrive within bodyTimeout (ReadTimeout on a project
// port) with 408, one that is not JSON with a JSON-RPC parse error, and a
// POST to /mcp without Mcp-Session-Id that does not open a session with
// 400 (the spec's answer; the go-sdk handler would make a session of it)
// before the MCP handlers see them: a bad message is refused alone and its
// session carries on.
func CheckPosts(next http.Handler, bodyTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		// The deadline covers this read only: it is lifted before the
		// answer, which may be a stream, begins.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		r.Body.Close() // under the deadline too: closing drains what is left
		_ = rc.SetReadDeadline(time.Time{})
		var tooBig *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &netErr) && netErr.Timeout():
			w.Header().Set("Connection", "close")
			streamable.WriteRPCError(w, http.StatusRequestTimeout, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("request body not received within %s: send the whole body at once", bodyTimeout))
			return
		case errors.As(err, &tooBig):
			streamable.WriteRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("request body over %d bytes: send smaller messages (the session is unchanged)", MaxBodyBytes))
			return
		case err != nil:
			controlapi.WriteError(w, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "read request body: %v", err))
			return
		case len(body) > 0 && !json.Valid(body):
			streamable.WriteRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "parse error: the body is not valid JSON (the session is unchanged)")
			return
		}
		if r.URL.Path == "/mcp" && r.Header.Get("Mcp-Session-Id") == "" && !opensSession(body) {
			streamable.WriteRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
				"missing Mcp-Session-Id header: send initialize first and then the session id it returns")
			return
		}
		streamable.SetBody(r, body)
		next.ServeHTTP(w, r)
	})
}

// opensSession reports whether a POST body may come without a session id:
// an initialize, or the server/discover probe of sessionless clients.
func opensSession(body []byte) bool {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize" || one.Method == "server/discover"
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
	}
	return false
}
