// Package rawresult carries a forwarded tools/call result as its server
// wrote it, from the tool that forwarded it (broker/hosted) to the
// transport that answers the call (broker/streamable's fast path), so
// that the answer leaves as those bytes instead of being decoded into the
// go-sdk's types and encoded again, twice, on the way out.
//
// The transport opens a [Slot] in the call's context ([With]); the tool
// keeps the bytes beside the result it returns ([Keep]); the transport
// takes them ([Slot.Bytes]) only for that very result, unchanged: a
// middleware that replaced the result, or changed what it holds, gets
// the result encoded as always. Without a slot (every other transport)
// Keep does nothing.
package rawresult

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type slotKey struct{}

// Slot holds the bytes of one call's result, once a tool has kept them.
// It belongs to the call's goroutine: the tool keeps and the transport
// takes in turn, never at once.
type Slot struct {
	res     *mcp.CallToolResult
	raw     json.RawMessage
	content []mcp.Content // what res held when kept
	sc      json.RawMessage
	isError bool
}

// With returns ctx with a new Slot for the result of the call ctx is for.
func With(ctx context.Context) (context.Context, *Slot) {
	s := &Slot{}
	return context.WithValue(ctx, slotKey{}, s), s
}

// Keep records raw, the result as its server wrote it, as the encoding
// of res, when ctx carries a Slot. raw must hold exactly what res holds:
// content (present, an array), and structuredContent and isError when
// res has them; res has no _meta. Bytes that may not pass as they are
// (a line break, which would end an SSE data line) are not kept.
func Keep(ctx context.Context, res *mcp.CallToolResult, raw json.RawMessage) {
	s, ok := ctx.Value(slotKey{}).(*Slot)
	if !ok || res == nil || res.Meta != nil || bytes.ContainsAny(raw, "\r\n") {
		return
	}
	sc, ok := res.StructuredContent.(json.RawMessage)
	if !ok && res.StructuredContent != nil {
		return
	}
	*s = Slot{res: res, raw: raw, content: res.Content, sc: sc, isError: res.IsError}
}

// Bytes returns the kept encoding of res: only when res is the result
// kept and still holds what it held then. A nil Slot holds nothing.
func (s *Slot) Bytes(res mcp.Result) (json.RawMessage, bool) {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || s == nil || s.res == nil || r != s.res || r.Meta != nil || r.IsError != s.isError || r.InputRequests != nil ||
		!sameSlice(r.Content, s.content) {
		return nil, false
	}
	sc, ok := r.StructuredContent.(json.RawMessage)
	if !ok && r.StructuredContent != nil || !sameSlice(sc, s.sc) {
		return nil, false
	}
	return s.raw, true
}

// sameSlice reports whether a and b are the same slice (not equal ones).
func sameSlice[E any](a, b []E) bool {
	if len(a) != len(b) || cap(a) != cap(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}
