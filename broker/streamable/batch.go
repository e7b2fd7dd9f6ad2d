package streamable

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of a JSON-RPC batch: a POST holding an array of messages, which
// protocol versions up to 2025-03-26 allow. The go-sdk hands every entry to
// its handler at once and writes each answer as it comes: one POST of
// 2,000 resources/read of a 1 MB file made 2 GB of answers. Now a batch
// over MaxBatch is refused whole; the requests of a batch run one at a
// time, in the order they arrive (Handler.Batches: JSON-RPC lets a server
// choose), so that one batch holds one core at most; and once its answers
// pass MaxBatchAnswer bytes, the rest are errors that cost nothing.
const (
	// MaxBatch is the most messages one batch may hold.
	MaxBatch = 32
	// MaxBatchAnswer is the most bytes of answers one batch gets: the
	// answer that passes it, and every later one, is an error naming it.
	MaxBatchAnswer = 8 << 20
)

// CodeLimit is the JSON-RPC code of an answer left out by a bound (the
// broker refuses requests past its limits with the same code).
const CodeLimit = -32000

// headerBatch marks the requests of a batch, with the batch's id, for the
// server's middleware: the go-sdk gives each request the headers of its POST.
const headerBatch = "Berth-Batch"

// InBatch reports whether a request came in a JSON-RPC batch (from the
// headers the go-sdk passes on in its RequestExtra).
func InBatch(extra *mcp.RequestExtra) bool { return batchID(extra) != "" }

func batchID(extra *mcp.RequestExtra) string {
	if extra == nil {
		return ""
	}
	return extra.Header.Get(headerBatch)
}

// batch is one JSON-RPC batch being answered. Its requests take turns: a
// request takes the turn before it runs, and gives it back once its answer
// has been written (batchWriter), so that no answer waits in memory for
// the client to read the ones before it.
type batch struct {
	turn  chan struct{} // cap 1: full while a request of the batch has the turn
	ended chan struct{} // closed when its POST has been answered or abandoned

	mu       sync.Mutex // guards the fields below
	held     bool       // the turn is taken and its answer not yet written
	answered int        // bytes of answers written
	spent    bool       // an answer passed MaxBatchAnswer: the rest are left out
}

// giveBack gives the turn back, if it is taken: an answer was written.
func (b *batch) giveBack() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held {
		b.held = false
		<-b.turn
	}
}

// startBatch registers r's batch and marks r's requests with its id; a
// client's own header of that name is dropped. It returns nil and true
// for a POST that is not a batch; false when it answered r itself (a batch
// over MaxBatch). The caller ends the batch when the POST is done.
func (h *Handler) startBatch(w http.ResponseWriter, r *http.Request, body []byte) (id string, b *batch, ok bool) {
	r.Header.Del(headerBatch)
	n, isBatch := batchLen(body)
	if !isBatch {
		return "", nil, true
	}
	if n > MaxBatch {
		WriteRPCError(w, http.StatusBadRequest, -32600, fmt.Sprintf(
			"a batch of %d messages, over the %d one POST may hold: send at most %d per batch, or one by one", n, MaxBatch, MaxBatch))
		return "", nil, false
	}
	id = rand.Text()
	b = &batch{turn: make(chan struct{}, 1), ended: make(chan struct{})}
	h.batchMu.Lock()
	h.batches[id] = b
	h.batchMu.Unlock()
	r.Header.Set(headerBatch, id)
	return id, b, true
}

// endBatch forgets batch id: its requests still waiting are left out.
func (h *Handler) endBatch(id string, b *batch) {
	h.batchMu.Lock()
	delete(h.batches, id)
	h.batchMu.Unlock()
	close(b.ended)
}

// Batches is a receiving middleware for the server h serves: the requests
// of one batch run one at a time, and once the batch's answers passed
// MaxBatchAnswer, or its POST has ended, the rest are answered with an
// error (CodeLimit) without running.
func (h *Handler) Batches(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		id := batchID(req.GetExtra())
		if id == "" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		h.batchMu.Lock()
		b := h.batches[id]
		h.batchMu.Unlock()
		ended := &jsonrpc.Error{Code: CodeLimit, Message: "left out: the POST of its batch has ended; send the request again"}
		if b == nil {
			return nil, ended
		}
		select {
		case b.turn <- struct{}{}:
		case <-b.ended:
			return nil, ended
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		b.mu.Lock() // the turn is given back when its answer is written
		b.held = true
		spent := b.spent
		b.mu.Unlock()
		if spent {
			return nil, &jsonrpc.Error{Code: CodeLimit, Message: leftOut}
		}
		return next(ctx, method, req)
	}
}

// leftOut says why a batch's request got no answer of its own.
var leftOut = fmt.Sprintf("left out: this batch's answers passed %d MiB; send this request alone", MaxBatchAnswer>>20)

// batchLen counts the messages of a batch without decoding them; ok is
// false when body is not an array.
func batchLen(body []byte) (n int, ok bool) {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 || b[0] != '[' {
		return 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return 0, false
	}
	for dec.More() {
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break // the go-sdk answers a malformed batch
		}
		n++
	}
	return n, true
}

// batchWriter carries the SSE answers of a batch and holds their total to
// MaxBatchAnswer: an answer that would pass it leaves as an error for its
// request instead, and the batch is spent. Other events pass as they are.
type batchWriter struct {
	http.ResponseWriter
	b *batch
}

func (b *batchWriter) Write(p []byte) (int, error) {
	data, ok := eventData(p)
	if !ok || !isAnswer(data) {
		return b.ResponseWriter.Write(p)
	}
	defer b.b.giveBack()
	b.b.mu.Lock()
	fits := !b.b.spent && b.b.answered+len(data) <= MaxBatchAnswer
	if fits {
		b.b.answered += len(data)
	} else {
		b.b.spent = true
	}
	b.b.mu.Unlock()
	if fits {
		return b.ResponseWriter.Write(p)
	}
	var id struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(data, &id)
	if len(id.ID) == 0 {
		id.ID = json.RawMessage("null")
	}
	msg, _ := json.Marshal(leftOut)
	out := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id.ID, CodeLimit, msg)
	head, _, _ := bytes.Cut(p, []byte("data: ")) // the event and id lines
	if _, err := b.ResponseWriter.Write(fmt.Appendf(nil, "%sdata: %s\n\n", head, out)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// FlushError flushes what was written.
func (b *batchWriter) FlushError() error { return http.NewResponseController(b.ResponseWriter).Flush() }

// Flush is FlushError for callers that look for an [http.Flusher].
func (b *batchWriter) Flush() { _ = b.FlushError() }

// Unwrap lets [http.ResponseController] reach the connection's deadlines.
func (b *batchWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// WriteRPCError answers with a JSON-RPC error that belongs to no request.
func WriteRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
}
