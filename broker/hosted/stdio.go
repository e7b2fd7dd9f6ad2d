package hosted

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"

	"github.com/berth-dev/berth/broker/rpcmsg"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMessage bounds one message a server writes, as the go-sdk's stdio
// transport does (mcp.DefaultMaxLineLength).
const maxMessage = mcp.DefaultMaxLineLength

// stdioTransport speaks MCP's stdio transport with a server process: one
// JSON-RPC message per line each way. It is the go-sdk's IOTransport but
// for decoding: each line is decoded once, by broker/rpcmsg, where the
// go-sdk decodes it three times through a decoder that starts each read
// with a 32 KiB buffer.
type stdioTransport struct {
	r    io.ReadCloser  // the server's stdout
	w    io.WriteCloser // the server's stdin
	conn *stdioConn     // set by Connect
	// progress, when set, is told the token of each progress notification
	// as it is read, before any later message is passed on (caller.seen).
	progress func(token string)
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	t.conn = &stdioConn{w: t.w, r: t.r, progress: t.progress, msgs: make(chan msgOrErr), closed: make(chan struct{}), ended: make(chan struct{})}
	go t.conn.read(bufio.NewReaderSize(t.r, 64<<10))
	return t.conn, nil
}

type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

type stdioConn struct {
	r        io.Closer
	w        io.WriteCloser
	writeMu  sync.Mutex
	progress func(token string)
	msgs     chan msgOrErr // from the one reading goroutine, in the server's order
	closed   chan struct{}
	once     sync.Once
	ended    chan struct{} // reading failed (readErr says why) or the connection closed
	readErr  error
	endOnce  sync.Once

	pendMu  sync.Mutex
	nextID  uint64
	pending map[jsonrpc.ID]chan *jsonrpc.Response // call's requests waiting for their answer
}

// end fails the calls waiting for an answer.
func (c *stdioConn) end(err error) {
	c.endOnce.Do(func() {
		c.readErr = err
		close(c.ended)
	})
}

func (c *stdioConn) SessionID() string { return "" }

// read decodes the server's lines until an error (EOF included). The
// answer to one of call's requests goes straight to its caller; every
// other message goes to Read, in the order the server wrote them. The
// answer cannot overtake what came before it for the same call: the
// messages before it were taken by the session first (msgs is
// unbuffered), and their progress notifications were counted (progress)
// so that the call waits for them to be passed on (callers.drain).
func (c *stdioConn) read(br *bufio.Reader) {
	for {
		line, err := readLine(br)
		if err == nil && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var msgs []jsonrpc.Message
		if err == nil {
			msgs, err = decodeLine(line)
		}
		if err != nil {
			c.end(err)
			c.pass(msgOrErr{err: err})
			return
		}
		handed := false
		for _, msg := range msgs {
			if c.answers(msg) {
				handed = true
				continue
			}
			c.sawProgress(msg)
			if !c.pass(msgOrErr{msg: msg}) {
				return
			}
		}
		if handed && br.Buffered() == 0 {
			// The next read finds nothing yet and parks this goroutine:
			// the caller the answer went to runs first, on this thread,
			// rather than after that read's system call.
			runtime.Gosched()
		}
	}
}

// pass hands v to Read; false once the connection is closed.
func (c *stdioConn) pass(v msgOrErr) bool {
	select {
	case c.msgs <- v:
		return true
	case <-c.closed:
		return false
	}
}

// sawProgress tells c.progress the token of a progress notification.
func (c *stdioConn) sawProgress(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || c.progress == nil || req.Method != "notifications/progress" {
		return
	}
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(req.Params, &p) == nil {
		if tok, ok := p.Token.(string); ok {
			c.progress(tok)
		}
	}
}

// readLine reads one line of at most maxMessage bytes, without its newline.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxMessage {
			return nil, fmt.Errorf("a message of the server is over %d bytes", maxMessage)
		}
		switch {
		case err == nil:
			return append(line, bytes.TrimRight(chunk, "\r\n")...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, chunk...)
		case errors.Is(err, io.EOF) && len(line)+len(chunk) > 0:
			return append(line, chunk...), nil
		default:
			return nil, err
		}
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		c.end(io.EOF)
		return nil, io.EOF
	case v := <-c.msgs:
		return v.msg, v.err
	}
}

// decodeLine reads a line as one message or a batch of them.
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	if b := bytes.TrimSpace(line); len(b) > 0 && b[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(b, &batch); err != nil {
			return nil, fmt.Errorf("a batch of the server: %w", err)
		}
		if len(batch) == 0 {
			return nil, errors.New("an empty batch from the server")
		}
		msgs := make([]jsonrpc.Message, 0, len(batch))
		for _, raw := range batch {
			msg, err := rpcmsg.Decode(raw)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, msg)
		}
		return msgs, nil
	}
	msg, err := rpcmsg.Decode(line)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{msg}, nil
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(ctx, append(data, '\n'))
}

// writeLine writes one message with its newline, in one write.
func (c *stdioConn) writeLine(ctx context.Context, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(line)
	return err
}

// callLine is the line of a request of call's: params (encoded on one
// line, as toolCallParams encodes them) put in the envelope as they are, where jsonrpc.EncodeMessage would check and copy
// them once more. The id ("berth-call-N") and the method (one of
// Berth's) need no escaping; the method is quoted by encoding/json all
// the same.
func callLine(id, method string, params json.RawMessage) []byte {
	m, _ := json.Marshal(method) // a string always marshals
	line := make([]byte, 0, len(`{"jsonrpc":"2.0","id":"","method":,"params":}`)+len(id)+len(m)+len(params)+1)
	line = append(line, `{"jsonrpc":"2.0","id":"`...)
	line = append(line, id...)
	line = append(line, `","method":`...)
	line = append(line, m...)
	line = append(line, `,"params":`...)
	line = append(line, params...)
	return append(line, "}\n"...)
}

func (c *stdioConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		c.end(io.EOF)
		err = errors.Join(c.r.Close(), c.w.Close())
	})
	return err
}

// call sends a request of Berth's own on the connection, beside the go-sdk
// session's, and returns the result as the server wrote it: the way a
// tools/call is forwarded without decoding its result into the go-sdk's
// types (and encoding it again) on the way through. Its id is a string
// ("berth-call-N"); the session's are numbers. params are encoded, on
// one line. When ctx ends first the server is told
// (notifications/cancelled), as the go-sdk tells it.
func (c *stdioConn) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c.pendMu.Lock()
	c.nextID++
	name := "berth-call-" + strconv.FormatUint(c.nextID, 10)
	id, err := jsonrpc.MakeID(name)
	if err != nil {
		c.pendMu.Unlock()
		return nil, err
	}
	answer := make(chan *jsonrpc.Response, 1)
	if c.pending == nil {
		c.pending = map[jsonrpc.ID]chan *jsonrpc.Response{}
	}
	c.pending[id] = answer
	c.pendMu.Unlock()
	defer func() {
		c.pendMu.Lock()
		delete(c.pending, id)
		c.pendMu.Unlock()
	}()
	if err := c.writeLine(ctx, callLine(name, method, params)); err != nil {
		return nil, err
	}
	select {
	case resp := <-answer:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-c.ended:
		return nil, c.readErr
	case <-ctx.Done():
		cancelled, _ := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": context.Cause(ctx).Error()})
		_ = c.Write(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: cancelled})
		return nil, ctx.Err()
	}
}

// answers takes the answer to one of call's requests; false for every
// other message, which goes to the session.
func (c *stdioConn) answers(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	if _, str := resp.ID.Raw().(string); !str {
		return false
	}
	c.pendMu.Lock()
	answer := c.pending[resp.ID]
	delete(c.pending, resp.ID)
	c.pendMu.Unlock()
	if answer == nil {
		return false
	}
	answer <- resp
	return true
}
