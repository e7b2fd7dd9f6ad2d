package shim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/coder/websocket"
)

// MaxMessageBytes caps one message from the IDE.
const MaxMessageBytes = 16 << 20

// DrainTimeout bounds how long the shim waits for in-flight replies after
// stdin closes.
const DrainTimeout = 5 * time.Second

// dialFunc opens a fresh WebSocket to the project's MCP endpoint, attaching
// again (and starting a broker) if needed.
type dialFunc func(ctx context.Context) (*websocket.Conn, error)

// forwarder moves MCP messages between the IDE (stdin/stdout) and the
// broker. Its run loop is the only goroutine that writes to stdout, writes
// to the WebSocket or touches pending.
type forwarder struct {
	dial  dialFunc
	in    io.Reader     // read when lines is nil
	lines <-chan []byte // the IDE's lines (readLines)
	out   io.Writer
	log   *slog.Logger

	pending map[string]bool // ids of IDE requests not yet answered
	// The IDE's initialize request and its notifications/initialized,
	// replayed after a reconnect; set before run when the shim answered
	// the IDE's initialize itself (roots.go), to replay on the first
	// connection too.
	initialize  []byte
	initialized []byte

	// unread counts the bytes written to out that the IDE has not read
	// yet; nil when the OS cannot tell (see awaitRead).
	unread func() (int, error)
	// told: a notification or request of the broker went to the IDE
	// after the last reply, and the IDE may not have read it yet.
	told bool
}

type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	id      string          // ID when it is a JSON-RPC id, else ""
}

func parseEnvelope(msg []byte) (id string, method string, ok bool) {
	env, ok := decodeEnvelope(msg)
	return env.id, env.Method, ok
}

// decodeEnvelope reads what the shim needs of a message; id is set only
// for a JSON-RPC id (a string or a number: others are never answered by id).
func decodeEnvelope(msg []byte) (env envelope, ok bool) {
	if json.Unmarshal(msg, &env) != nil {
		return envelope{}, false
	}
	env.id = idKey(env.ID)
	return env, true
}

// idKey is raw as the shim keeps an id: its JSON text when it is a string
// or a number, else "".
func idKey(raw json.RawMessage) string {
	if len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		return string(raw)
	}
	return ""
}

// cancelledID is the id (as decodeEnvelope keeps it) of the request a
// notifications/cancelled names, or "".
func cancelledID(msg []byte) string {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil {
		return ""
	}
	return idKey(n.Params.RequestID)
}

type wsEvent struct {
	msg []byte
	err error
}

// run forwards until stdin ends (then drains and returns nil), ctx ends, or
// the broker cannot be reached again. In order: the IDE's lines, the
// first connection, then the forwarding loop.
func (f *forwarder) run(ctx context.Context) error {
	f.pending = make(map[string]bool)
	lines, stop := f.ideLines()
	defer stop()
	conn, events, err := f.connect(ctx)
	if err != nil {
		return err
	}
	return f.forward(ctx, lines, conn, events)
}

// ideLines is f.lines, or when there are none the lines read from f.in by
// a reader that stop ends.
func (f *forwarder) ideLines() (lines <-chan []byte, stop func()) {
	if f.lines != nil {
		return f.lines, func() {}
	}
	ch := make(chan []byte)
	done := make(chan struct{})
	go readLines(f.in, ch, done, f.log)
	return ch, func() { close(done) }
}

// connect opens the first connection to the broker and starts reading it;
// when the shim answered the IDE's initialize already, it replays it first
// and drops the broker's answer.
func (f *forwarder) connect(ctx context.Context) (*websocket.Conn, <-chan wsEvent, error) {
	conn, err := f.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	if f.initialize == nil {
		return conn, f.readWS(ctx, conn), nil
	}
	events, err := f.replay(ctx, conn)
	if err != nil {
		conn.Close(websocket.StatusGoingAway, "")
		return nil, nil, fmt.Errorf("initialize the project's session on the broker: %w", err)
	}
	return conn, events, nil
}

// forward moves lines to the broker and its messages to the IDE until
// stdin ends and every request is answered (or DrainTimeout passes), ctx
// ends, or the broker cannot be reached again; it reconnects when the
// connection is lost.
func (f *forwarder) forward(ctx context.Context, lines <-chan []byte, conn *websocket.Conn, events <-chan wsEvent) error {
	var drain <-chan time.Time
	eof := false
	var err error
	for {
		if eof && len(f.pending) == 0 {
			conn.Close(websocket.StatusNormalClosure, "")
			return nil
		}
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusGoingAway, "")
			return ctx.Err()
		case <-drain:
			f.log.Warn("stdin closed; gave up waiting for replies", "pending", len(f.pending))
			conn.Close(websocket.StatusNormalClosure, "")
			return nil
		case line, ok := <-lines:
			if !ok {
				eof, lines = true, nil
				drain = time.After(DrainTimeout)
				continue
			}
			if reply := checkLine(line); reply != nil {
				if err := f.writeOut(reply); err != nil {
					conn.Close(websocket.StatusGoingAway, "")
					return fmt.Errorf("write to stdout: %w", err)
				}
				continue
			}
			if conn, events, err = f.send(ctx, conn, events, line); err != nil {
				return err
			}
		case ev := <-events:
			if ev.err != nil {
				if eof {
					return nil
				}
				f.log.Warn("broker connection lost", "err", ev.err)
				if conn, events, err = f.reconnect(ctx, conn); err != nil {
					return err
				}
				continue
			}
			if err := f.toIDE(ev.msg); err != nil {
				conn.Close(websocket.StatusGoingAway, "")
				return fmt.Errorf("write to stdout: %w", err)
			}
		}
	}
}

// send forwards one of the IDE's lines to the broker. A message that could
// not be written never reached a broker: it is sent again, once, on a new
// connection, and a request that fails twice is answered with an error.
// It returns the connection to use from then on; an error only when the
// broker cannot be reached again.
func (f *forwarder) send(ctx context.Context, conn *websocket.Conn, events <-chan wsEvent, line []byte) (*websocket.Conn, <-chan wsEvent, error) {
	for try := 1; ; try++ {
		err := f.fromIDE(ctx, conn, line)
		if err == nil {
			return conn, events, nil
		}
		f.log.Warn("broker connection lost while sending", "err", err)
		f.unsent(line)
		if try == 2 {
			if id, _, _ := parseEnvelope(line); id != "" {
				_ = f.writeOut(errorResponse(id, -32603, "the Berth broker is unreachable: send it again"))
			}
			return conn, events, nil
		}
		if conn, events, err = f.reconnect(ctx, conn); err != nil {
			return nil, nil, err
		}
	}
}

// checkLine returns the JSON-RPC error to answer a line with instead of
// forwarding it (too large, or not JSON), or nil for a line to forward.
func checkLine(line []byte) []byte {
	if line == nil {
		return errorResponse("null", -32600, fmt.Sprintf("message over %d bytes", MaxMessageBytes))
	}
	if !json.Valid(line) {
		return errorResponse("null", -32700, "parse error: not valid JSON")
	}
	return nil
}

// fromIDE records what the broker must answer and sends the line.
func (f *forwarder) fromIDE(ctx context.Context, conn *websocket.Conn, line []byte) error {
	env, _ := decodeEnvelope(line)
	if env.id != "" && env.Method != "" && env.JSONRPC == "2.0" {
		f.pending[env.id] = true // the broker answers it by id (else with id null: nothing to wait for)
	}
	switch env.Method {
	case "notifications/cancelled":
		// The broker does not answer a request its client cancelled
		// (the MCP spec): nothing to wait for, nothing to answer at a
		// reconnect.
		delete(f.pending, cancelledID(line))
	case "initialize":
		f.initialize = bytes.Clone(line)
	case "notifications/initialized":
		f.initialized = bytes.Clone(line)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return conn.Write(wctx, websocket.MessageText, line)
}

// unsent forgets what fromIDE recorded of a line it failed to write, so
// that a reconnect neither answers it with an error nor replays it.
func (f *forwarder) unsent(line []byte) {
	id, method, _ := parseEnvelope(line)
	delete(f.pending, id)
	switch method {
	case "initialize":
		f.initialize = nil
	case "notifications/initialized":
		f.initialized = nil
	}
}

// toIDE writes one broker message to stdout, in the order the broker
// sent it; a reply waits until the IDE has read the messages before it
// (awaitRead).
func (f *forwarder) toIDE(msg []byte) error {
	id, method, ok := parseEnvelope(msg)
	reply := ok && id != "" && method == ""
	if reply {
		delete(f.pending, id)
		if f.told {
			f.awaitRead()
		}
	}
	f.told = !reply
	return f.writeOut(msg)
}

// ReadWait bounds how long a reply waits for the IDE to read the
// notifications written before it.
const ReadWait = time.Second

// awaitRead waits until the IDE has read everything written to stdout,
// for at most ReadWait. A client on the TypeScript SDK hands each
// notification it parses to its handler a moment later (a microtask) but
// settles a reply at once: when a notification and the reply after it
// come in one read, the reply is handled first, and the last progress of
// a call is dropped as late. The broker sends them in order; written only
// once the IDE has read the notification, the reply comes in a read of
// its own, behind it. No event tells a writer that its reader read, so
// this polls, from 20 µs (a client reads within a few) up to every 2 ms.
// Where the OS cannot tell (macOS), the reply goes at once.
func (f *forwarder) awaitRead() {
	if f.unread == nil {
		return
	}
	deadline := time.Now().Add(ReadWait)
	for delay := 20 * time.Microsecond; ; delay = min(delay*2, 2*time.Millisecond) {
		n, err := f.unread()
		if err != nil || n == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.log.Debug("the IDE has not read the notifications before a reply; sending the reply", "unread_bytes", n, "waited", ReadWait)
			return
		}
		time.Sleep(delay)
	}
}

func (f *forwarder) writeOut(msg []byte) error { return writeLine(f.out, msg) }

// writeLine writes one message and its newline to the IDE.
func writeLine(out io.Writer, msg []byte) error {
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	_, err := out.Write(buf)
	return err
}

// readWS delivers the connection's messages, then one error, on a channel.
// It keeps reading the WebSocket whatever the forward loop is doing: the
// loop may be blocked writing to the broker while the broker is blocked
// writing replies to us, and only an always-reading shim breaks that cycle.
// Messages wait in a queue until the loop takes them (the broker sends
// only replies and notifications, so the queue stays bounded by what the
// IDE asked). An abandoned channel's goroutines end with ctx.
func (f *forwarder) readWS(ctx context.Context, conn *websocket.Conn) <-chan wsEvent {
	in := make(chan wsEvent)
	go func() {
		defer close(in)
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				select {
				case in <- wsEvent{err: err}:
				case <-ctx.Done():
				}
				return
			}
			if typ == websocket.MessageText {
				select {
				case in <- wsEvent{msg: data}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	out := make(chan wsEvent)
	go func() {
		var queue []wsEvent
		for in != nil || len(queue) > 0 {
			var send chan wsEvent
			var next wsEvent
			if len(queue) > 0 {
				send, next = out, queue[0]
			}
			select {
			case ev, ok := <-in:
				if !ok {
					in = nil
					continue
				}
				queue = append(queue, ev)
			case send <- next:
				queue[0] = wsEvent{}
				queue = queue[1:]
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// reconnect answers every in-flight request with an error (the broker that
// would have answered is gone), dials again and replays the IDE's
// initialization so that the new session matches the old one.
func (f *forwarder) reconnect(ctx context.Context, old *websocket.Conn) (*websocket.Conn, <-chan wsEvent, error) {
	old.Close(websocket.StatusGoingAway, "")
	for id := range f.pending {
		_ = f.writeOut(errorResponse(id, -32603, "the Berth broker restarted while this request was in flight: send it again"))
	}
	clear(f.pending)
	deadline := time.Now().Add(30 * time.Second)
	delay := 100 * time.Millisecond
	var lastErr error
	for attempt := 1; time.Now().Before(deadline); attempt++ {
		conn, err := f.dial(ctx)
		if err == nil {
			events, err := f.replay(ctx, conn)
			if err == nil {
				f.log.Info("reconnected to broker", "attempt", attempt)
				return conn, events, nil
			}
			conn.Close(websocket.StatusGoingAway, "")
		}
		if attempt == 1 {
			f.log.Warn("the broker is gone; reconnecting for 30s", "err", err)
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
	return nil, nil, fmt.Errorf("broker unreachable after 30s of retries: %w", lastErr)
}

func (f *forwarder) replay(ctx context.Context, conn *websocket.Conn) (<-chan wsEvent, error) {
	events := f.readWS(ctx, conn)
	if f.initialize == nil {
		return events, nil
	}
	initID, _, _ := parseEnvelope(f.initialize)
	if err := conn.Write(ctx, websocket.MessageText, f.initialize); err != nil {
		return nil, err
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.err != nil {
				return nil, ev.err
			}
			if id, method, _ := parseEnvelope(ev.msg); id == initID && method == "" {
				if f.initialized != nil {
					if err := conn.Write(ctx, websocket.MessageText, f.initialized); err != nil {
						return nil, err
					}
				}
				return events, nil
			}
		case <-timeout:
			return nil, errors.New("no answer to the replayed initialize")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// readLines sends each non-empty line of r (without its newline) to out, a
// nil slice for a line over MaxMessageBytes, and closes out at EOF. Once
// done is closed (its reader returned) it returns at its next line instead
// of waiting for a reader that is gone; a read in progress on r ends only
// with r.
func readLines(r io.Reader, out chan<- []byte, done <-chan struct{}, log *slog.Logger) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	tooBig := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooBig {
			buf = append(buf, chunk...)
			if len(buf) > MaxMessageBytes {
				tooBig, buf = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		var line []byte
		if !tooBig {
			line = bytes.TrimSpace(buf)
		}
		if tooBig || len(line) > 0 {
			select {
			case out <- bytes.Clone(line): // nil for a line too big
			case <-done:
				return
			}
		}
		buf, tooBig = buf[:0], false
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Warn("read stdin", "err", err)
			}
			return
		}
	}
}

func errorResponse(id string, code int, msg string) []byte {
	raw, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"error":   map[string]any{"code": code, "message": msg},
	})
	return raw
}
