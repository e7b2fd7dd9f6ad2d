package streamable

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
)

// answerWriter carries the answer to a POST that holds one JSON-RPC
// request. The go-sdk answers every POST with an SSE stream, flushing each
// event as it writes it, and net/http then ends the chunked body with a
// write of its own: a call answered with nothing before it cost two
// writes, two reads for the client and a stream to parse. answerWriter
// keeps everything the go-sdk does and changes only how the answer leaves:
//
//   - an answer with no event before it is written as the spec's other
//     form of answer, one application/json body (the go-sdk's JSONResponse
//     does the same, but it also moves the notifications of a call to the
//     standalone GET stream, where a client without one loses them);
//   - an answer that ends an SSE stream (a progress notification, a log
//     message or a request of the server went first, each flushed as it
//     was written) is not flushed by itself: it leaves with the end of the
//     response, in one write.
//
// Either way the answer is the last thing its stream carries (the go-sdk
// closes the stream when its one request is answered), and it leaves when
// the handler returns, a moment later. Events that are not whole SSE
// message events as the go-sdk writes them are passed on as they come.
type answerWriter struct {
	http.ResponseWriter
	started  bool // bytes or a status went out: the answer is part of an SSE stream
	answered bool // the answer was written: nothing follows it
	// streamHeaders: set the headers of the go-sdk's SSE answer as the
	// stream starts (the fast path's; the go-sdk sets its own).
	streamHeaders bool
}

// start notes that the response is an SSE stream.
func (a *answerWriter) start() {
	if !a.started && a.streamHeaders {
		h := a.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Content-Type", "text/event-stream")
		h.Set("Connection", "keep-alive")
	}
	a.started = true
}

// answer writes data, an answer with nothing before it, as the response's
// one application/json body.
func (a *answerWriter) answer(data []byte) error {
	if a.answered {
		return errAnswered
	}
	a.answered = true
	h := a.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Connection") // the go-sdk's keep-alive for a stream
	_, err := a.ResponseWriter.Write(data)
	return err
}

var errAnswered = errors.New("streamable: the request was answered; its stream is closed")

func (a *answerWriter) WriteHeader(status int) {
	a.start()
	a.ResponseWriter.WriteHeader(status)
}

func (a *answerWriter) Write(p []byte) (int, error) {
	if a.answered {
		return 0, errAnswered
	}
	data, ok := eventData(p)
	if !ok || !isAnswer(data) {
		a.start()
		return a.ResponseWriter.Write(p)
	}
	if a.started {
		a.answered = true
		return a.ResponseWriter.Write(p)
	}
	if err := a.answer(data); err != nil {
		return 0, err
	}
	return len(p), nil
}

// FlushError flushes what was written, except the answer: it leaves with
// the end of the response. A flush sends the headers: the response is a
// stream from then on.
func (a *answerWriter) FlushError() error {
	if a.answered {
		return nil
	}
	a.start()
	return http.NewResponseController(a.ResponseWriter).Flush()
}

// Flush is FlushError for callers that look for an [http.Flusher].
func (a *answerWriter) Flush() { _ = a.FlushError() }

// Unwrap lets [http.ResponseController] reach the connection's deadlines.
func (a *answerWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// oneMessage reports whether a POST body is one JSON-RPC message (an
// object), not a batch (an array).
func oneMessage(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// eventData is the data of p when p is one whole SSE "message" event with
// one data line, as the go-sdk writes a JSON-RPC message.
func eventData(p []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("event: message\n"))
	if !ok {
		return nil, false
	}
	if after, ok := bytes.CutPrefix(rest, []byte("id: ")); ok {
		if _, rest, ok = bytes.Cut(after, []byte("\n")); !ok {
			return nil, false
		}
	}
	data, ok := bytes.CutPrefix(rest, []byte("data: "))
	if !ok {
		return nil, false
	}
	data, ok = bytes.CutSuffix(data, []byte("\n\n"))
	if !ok || bytes.IndexByte(data, '\n') >= 0 {
		return nil, false
	}
	return data, true
}

// isAnswer reports whether msg is a JSON-RPC response (a result or an
// error), not a request or a notification: its first member that tells
// them apart is result or error rather than method.
func isAnswer(msg []byte) bool {
	if member, ok := sdkMember(msg); ok {
		return member != "method"
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		switch key {
		case "method":
			return false
		case "result", "error":
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

// sdkMember reads the member that tells a message's kind where the go-sdk
// puts it (jsonrpc.EncodeMessage writes "jsonrpc", then "id" when there is
// one, then "method", "result" or "error"), without decoding the rest; ok
// is false for anything else (an id string with escapes, another order),
// which isAnswer then decodes.
func sdkMember(msg []byte) (member string, ok bool) {
	rest, ok := bytes.CutPrefix(msg, []byte(`{"jsonrpc":"2.0",`))
	if !ok {
		return "", false
	}
	if id, ok := bytes.CutPrefix(rest, []byte(`"id":`)); ok {
		n := 0
		if len(id) > 0 && id[0] == '"' {
			end := bytes.IndexByte(id[1:], '"')
			if end < 0 || bytes.IndexByte(id[1:1+end], '\\') >= 0 {
				return "", false
			}
			n = end + 2
		} else {
			for n < len(id) && (id[n] == '-' || id[n] >= '0' && id[n] <= '9') {
				n++
			}
		}
		if rest, ok = bytes.CutPrefix(id[n:], []byte(",")); !ok {
			return "", false
		}
	}
	for _, m := range []string{"method", "result", "error"} {
		if bytes.HasPrefix(rest, []byte(`"`+m+`":`)) {
			return m, true
		}
	}
	return "", false
}
