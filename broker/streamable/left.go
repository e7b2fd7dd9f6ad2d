package streamable

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Work stops when its client leaves. A call's answer goes on the POST that
// carried it; when that POST's connection goes away before the answer (the
// client was killed, its machine slept), nobody waits for the answer any
// more, yet neither the go-sdk's transport nor the session cancels the call
// (only a notifications/cancelled or the session's end does). So the
// handler cancels it: after ResumeGrace, unless the client resumed a stream
// of the session meanwhile (a GET with Last-Event-ID, as the MCP spec lets
// a client whose connection broke do), every call of the POST still
// unanswered is cancelled as the client's notifications/cancelled would
// cancel it.

// ResumeGrace is how long a call whose POST's connection went away runs on
// for its client to resume the session's streams.
const ResumeGrace = 2 * time.Second

// leftReason is what the session's handlers see as the cancellation's reason.
const leftReason = "the request's connection went away before its answer"

// postCalls notes ids (the calls of one POST) as waiting for their answers;
// it returns the channels closed by each answer, nil for an id already
// waiting on another POST (the go-sdk refuses that POST).
func (c *sessionConn) postCalls(ids []jsonrpc.ID) []chan struct{} {
	chs := make([]chan struct{}, len(ids))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range ids {
		if c.posted[id] == nil {
			chs[i] = make(chan struct{})
			c.posted[id] = chs[i]
		}
	}
	return chs
}

// answered closes the channel of id's POST, if one waits for it; c.mu held.
func (c *sessionConn) answered(id jsonrpc.ID) {
	if ch := c.posted[id]; ch != nil {
		close(ch)
		delete(c.posted, id)
	}
}

// forgetPosted drops ids (with their channels chs) once their POST no
// longer cares.
func (c *sessionConn) forgetPosted(ids []jsonrpc.ID, chs []chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range ids {
		if chs[i] != nil && c.posted[id] == chs[i] {
			delete(c.posted, id)
		}
	}
}

// cancelCall cancels the call id of the session: a tools/call the fast
// path runs directly, anything else through the session, handed the
// notifications/cancelled the client did not send.
func (c *sessionConn) cancelCall(id jsonrpc.ID, reason string) {
	c.mu.Lock()
	fc := c.calls[id]
	c.mu.Unlock()
	if fc != nil && fc.cancel != nil {
		fc.cancel()
	}
	params, err := json.Marshal(struct {
		RequestID any    `json:"requestId"`
		Reason    string `json:"reason"`
	}{id.Raw(), reason})
	if err != nil {
		return
	}
	select {
	case c.in <- &jsonrpc.Request{Method: "notifications/cancelled", Params: params}:
	case <-c.closed:
	case <-c.ended:
	}
}

// watchPost notes the calls of a POST (ids) on e's session; the function it
// returns, run when the POST has been served, cancels those still
// unanswered after ResumeGrace when r's connection went away.
func (h *Handler) watchPost(r *http.Request, e *entry, ids []jsonrpc.ID) func() {
	c := e.conn
	if c == nil || len(ids) == 0 {
		return func() {}
	}
	chs := c.postCalls(ids)
	// Resumes are counted from the POST's start: a client may resume
	// before this handler has noticed its connection went away.
	resumes := e.resumes.Load()
	return func() {
		if r.Context().Err() == nil || !waiting(chs) {
			c.forgetPosted(ids, chs)
			return
		}
		time.AfterFunc(ResumeGrace, func() {
			defer c.forgetPosted(ids, chs)
			if e.resumes.Load() != resumes {
				return // the client came back for its answers
			}
			for i, id := range ids {
				if chs[i] != nil && waiting(chs[i:i+1]) {
					h.opts.Logger.Info("cancelled a call whose client left", "session", c.SessionID(), "id", id.Raw())
					c.cancelCall(id, leftReason)
				}
			}
		})
	}
}

// waiting reports whether any of chs is still open (its answer not sent).
func waiting(chs []chan struct{}) bool {
	for _, ch := range chs {
		if ch == nil {
			continue
		}
		select {
		case <-ch:
		default:
			return true
		}
	}
	return false
}

// callIDs are the ids of the calls a POST's body (one message or a batch)
// holds; nil when it holds none or does not parse (the go-sdk answers it).
func callIDs(body []byte) []jsonrpc.ID {
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var msgs []msg
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &msgs) != nil {
			return nil
		}
	} else {
		var m msg
		if json.Unmarshal(b, &m) != nil {
			return nil
		}
		msgs = []msg{m}
	}
	var ids []jsonrpc.ID
	for _, m := range msgs {
		if m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
			continue // a notification or a response: no answer waits
		}
		var raw any
		if json.Unmarshal(m.ID, &raw) != nil {
			continue
		}
		if id, err := jsonrpc.MakeID(raw); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
