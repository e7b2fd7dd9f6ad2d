package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// protocolVersion is the MCP revision the bench clients announce.
const protocolVersion = "2025-06-18"

func initializeRequest(id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"berth-bench","version":"1"}}}`, id, protocolVersion)
}

var initializedNote = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

func toolsListRequest(id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, id)
}

func toolCallRequest(id int, tool string) []byte { return toolCallWith(id, tool, "{}") }

// toolCallWith calls tool with args, a JSON object.
func toolCallWith(id int, tool, args string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// reply is the part of a JSON-RPC response the bench checks.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
	Result struct {
		IsError bool `json:"isError"`
		// StructuredContent.Total is a search's count of matching sections.
		StructuredContent struct {
			Total int `json:"total"`
		} `json:"structuredContent"`
	} `json:"result"`
}

// check turns a JSON-RPC response into an error when it is one.
func (r reply) check() error {
	switch {
	case r.Error != nil:
		return fmt.Errorf("JSON-RPC error: %s", r.Error.Message)
	case r.Result.IsError:
		return errors.New("tool result with isError")
	}
	return nil
}

// stdioClient speaks newline-delimited JSON-RPC to a process's stdin/stdout
// (berth-shim or mcp-remote), one request at a time.
type stdioClient struct {
	in  io.Writer
	out *bufio.Reader
}

func newStdioClient(in io.Writer, out io.Reader) *stdioClient {
	return &stdioClient{in: in, out: bufio.NewReaderSize(out, 64<<10)}
}

func (c *stdioClient) send(msg []byte) error {
	_, err := c.in.Write(append(msg, '\n'))
	return err
}

// call sends req and reads lines until the response with id arrives
// (notifications and other lines are skipped; at most 1,000 of them).
func (c *stdioClient) call(req []byte, id int) error {
	if err := c.send(req); err != nil {
		return fmt.Errorf("write request: %w", err)
	}
	want := strconv.Itoa(id)
	for range 1000 {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("read response %d: %w", id, err)
		}
		var r reply
		if json.Unmarshal(line, &r) != nil || string(r.ID) != want {
			continue
		}
		return r.check()
	}
	return fmt.Errorf("no response %d within 1,000 lines", id)
}

// handshake is an IDE's start: initialize, initialized, tools/list.
func (c *stdioClient) handshake() error {
	if err := c.call(initializeRequest(1), 1); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if err := c.send(initializedNote); err != nil {
		return err
	}
	if err := c.call(toolsListRequest(2), 2); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	return nil
}

// httpSession is one MCP session on a streamable HTTP endpoint, driven
// with plain requests so that the client's own cost stays small.
type httpSession struct {
	hc      *http.Client
	url     string
	session string
	nextID  int
}

func openHTTPSession(ctx context.Context, hc *http.Client, url string) (*httpSession, error) {
	s := &httpSession{hc: hc, url: url, nextID: 1}
	if _, err := s.post(ctx, initializeRequest(s.nextID), true); err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	if _, err := s.post(ctx, initializedNote, false); err != nil {
		return nil, fmt.Errorf("initialized %s: %w", url, err)
	}
	return s, nil
}

// callTool calls a tool with no arguments.
func (s *httpSession) callTool(ctx context.Context, tool string) error {
	return s.callWith(ctx, tool, "{}")
}

// callWith calls a tool with args, a JSON object.
func (s *httpSession) callWith(ctx context.Context, tool, args string) error {
	s.nextID++
	r, err := s.post(ctx, toolCallWith(s.nextID, tool, args), true)
	if err != nil {
		return err
	}
	return r.check()
}

func (s *httpSession) post(ctx context.Context, body []byte, wantReply bool) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return reply{}, err
	}
	if resp.StatusCode/100 != 2 {
		return reply{}, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		s.session = id
	}
	if !wantReply {
		return reply{}, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = sseData(raw)
	}
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		return reply{}, fmt.Errorf("response is not JSON-RPC: %w", err)
	}
	return r, nil
}

// close ends the session (DELETE), as a well-behaved client does.
func (s *httpSession) close(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", s.session)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// sseData is the data of the first event of an event stream that carries a
// JSON-RPC response.
func sseData(raw []byte) []byte {
	for line := range bytes.Lines(raw) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			d = bytes.TrimSpace(d)
			if bytes.Contains(d, []byte(`"id"`)) {
				return d
			}
		}
	}
	return nil
}
