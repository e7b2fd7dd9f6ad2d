// Package rpcmsg decodes JSON-RPC 2.0 messages into the go-sdk's
// [jsonrpc.Message] as [jsonrpc.DecodeMessage] does, with encoding/json.
//
// The go-sdk decodes every message through a decoder that starts each read
// with a 32 KiB buffer: two of them per message, most of the garbage a
// busy broker makes. Berth's own transports (WebSocket, the streamable
// HTTP fast path, the hosted servers' stdio) decode here instead, and
// hand the SDK the decoded message.
package rpcmsg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Decode reads the first JSON value of data as one JSON-RPC message: a
// *jsonrpc.Request when it has a "method" member, else a
// *jsonrpc.Response. Member names match exactly, as in the go-sdk.
func Decode(data []byte) (jsonrpc.Message, error) {
	if msg, ok := fastDecode(data); ok {
		return msg, nil
	}
	var members map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&members); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if members == nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %s is not an object", bytes.TrimSpace(data))
	}
	var version string
	if err := unmarshal(members["jsonrpc"], &version); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", version, "2.0")
	}
	var rawID any
	if err := unmarshal(members["id"], &rawID); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, err
	}
	if m, ok := members["method"]; ok {
		var method string
		if err := unmarshal(m, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: members["params"]}, nil
	}
	if !id.IsValid() {
		return nil, errInvalidRequest
	}
	resp := &jsonrpc.Response{ID: id, Result: members["result"]}
	if e, ok := members["error"]; ok && string(e) != "null" {
		werr, err := decodeError(e)
		if err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		resp.Error = werr
	}
	return resp, nil
}

// errInvalidRequest is what the go-sdk answers for a message that is
// neither a request nor a response with an id.
var errInvalidRequest = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// decodeError reads a response's error object, member names matching
// exactly.
func decodeError(raw json.RawMessage) (*jsonrpc.Error, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, err
	}
	if members == nil {
		return nil, errors.New("error is not an object")
	}
	werr := &jsonrpc.Error{}
	if err := unmarshal(members["code"], &werr.Code); err != nil {
		return nil, err
	}
	if err := unmarshal(members["message"], &werr.Message); err != nil {
		return nil, err
	}
	if d, ok := members["data"]; ok && string(d) != "null" {
		werr.Data = d
	}
	return werr, nil
}

// unmarshal decodes raw into v; an absent member leaves v as it is.
func unmarshal(raw json.RawMessage, v any) error {
	if raw == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// CancelledID is the id of the request msg cancels when msg is a
// notifications/cancelled; false otherwise.
func CancelledID(msg jsonrpc.Message) (jsonrpc.ID, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() || req.Method != "notifications/cancelled" {
		return jsonrpc.ID{}, false
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return jsonrpc.ID{}, false
	}
	return id, true
}
