package hosted

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipeServer is the server's end of a stdioConn: what Berth writes, line
// by line, and a writer for what the server says.
type pipeServer struct {
	lines *bufio.Scanner
	out   io.WriteCloser
}

func newPipeConn(t *testing.T) (*stdioConn, *pipeServer) {
	t.Helper()
	inR, inW := io.Pipe()   // Berth -> server
	outR, outW := io.Pipe() // server -> Berth
	st := &stdioTransport{r: outR, w: inW}
	conn, err := st.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return st.conn, &pipeServer{lines: bufio.NewScanner(inR), out: outW}
}

func (s *pipeServer) next(t *testing.T) map[string]any {
	t.Helper()
	if !s.lines.Scan() {
		t.Fatalf("no line from Berth: %v", s.lines.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(s.lines.Bytes(), &m); err != nil {
		t.Fatalf("%s: %v", s.lines.Bytes(), err)
	}
	return m
}

func (s *pipeServer) say(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.out, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// TestStdioCallGetsItsAnswerAsWritten: a call's answer reaches it as the
// server wrote it and never reaches the session; the server's other
// messages (a notification, an answer to the session's own request, a
// batch) are read by the session in order.
func TestStdioCallGetsItsAnswerAsWritten(t *testing.T) {
	c, srv := newPipeConn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type answer struct {
		raw json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		raw, err := c.call(ctx, "tools/call", json.RawMessage(`{"name":"echo"}`))
		done <- answer{raw, err}
	}()
	req := srv.next(t)
	if req["method"] != "tools/call" || !strings.HasPrefix(req["id"].(string), "berth-call-") {
		t.Fatalf("the call as sent: %v", req)
	}
	id, _ := json.Marshal(req["id"])
	go func() { // the pipe holds nothing: the server writes as Berth reads
		for _, line := range []string{
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"Echo:  ping"}]}}`,
			`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]`,
		} {
			if _, err := io.WriteString(srv.out, line+"\n"); err != nil {
				return
			}
		}
	}()
	var got []string
	for range 3 {
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			got = append(got, m.Method)
		case *jsonrpc.Response:
			got = append(got, "answer "+string(m.Result))
		}
	}
	if want := "notifications/message,answer {},notifications/tools/list_changed"; strings.Join(got, ",") != want {
		t.Fatalf("the session read %q, want %q", got, want)
	}
	a := <-done
	if a.err != nil || string(a.raw) != `{"content":[{"type":"text","text":"Echo:  ping"}]}` {
		t.Fatalf("the call got %s, %v", a.raw, a.err)
	}
}

// TestStdioCallCancelledTellsTheServer: a call whose context ends sends
// notifications/cancelled for its id, and an answer that comes after is
// dropped; a call waiting when the server's output ends fails.
func TestStdioCallCancelledTellsTheServer(t *testing.T) {
	c, srv := newPipeConn(t)
	go func() { // the session's reader
		for {
			if _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.call(ctx, "tools/call", json.RawMessage(`{"name":"slow"}`)); errc <- err }()
	id := srv.next(t)["id"]
	cancel()
	if n := srv.next(t); n["method"] != "notifications/cancelled" || n["params"].(map[string]any)["requestId"] != id {
		t.Fatalf("after the cancel the server got %v", n)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call: %v", err)
	}
	idJSON, _ := json.Marshal(id)
	srv.say(t, `{"jsonrpc":"2.0","id":`+string(idJSON)+`,"result":{}}`) // late: dropped

	go func() {
		_, err := c.call(context.Background(), "tools/call", json.RawMessage(`{"name":"never"}`))
		errc <- err
	}()
	srv.next(t)
	srv.out.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a call whose server went away succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call whose server went away still waits")
	}
}

// TestCallLineIsOneRequest: a request of call's is one line that reads as
// the request jsonrpc.EncodeMessage makes of the same id, method and
// params, whatever the params hold.
func TestCallLineIsOneRequest(t *testing.T) {
	for _, params := range []any{
		map[string]any{"name": "echo", "arguments": map[string]any{"message": "two\nlines \u2028 <&> \"q\" \\"}},
		map[string]any{},
		json.RawMessage(`{ "name" : "spaced",
			"arguments": {"a": [1, 2]} }`),
	} {
		raw, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		line := callLine("berth-call-7", "tools/call", raw)
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("%q: not one line ending in a newline", line)
		}
		got, err := jsonrpc.DecodeMessage(line[:len(line)-1])
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		id, _ := jsonrpc.MakeID("berth-call-7")
		want, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: "tools/call", Params: raw})
		if err != nil {
			t.Fatal(err)
		}
		again, err := jsonrpc.EncodeMessage(got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, want) {
			t.Fatalf("callLine reads as %s, want %s", again, want)
		}
	}
}

// TestToolCallParamsAsMarshal: the params of a forwarded tools/call,
// written out by hand in the usual case, are what json.Marshal makes of
// them (compacted: arguments pass with the spaces the caller put in), on
// one line, with or without a progress token, whatever the tool's name;
// what the hand does not write (a _meta member to pass on, arguments over
// lines, a retry) goes through json.Marshal.
func TestToolCallParamsAsMarshal(t *testing.T) {
	cl := &caller{ours: "berth-12"}
	for _, tc := range []struct {
		in    mcp.CallToolParamsRaw
		token any
	}{
		{in: mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage(`{"message":"ping"}`)}},
		{in: mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage(`{"message":"ping"}`), Meta: mcp.Meta{"progressToken": 7}}, token: 7},
		{in: mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage(`{ "a" : [1, 2] }`)}},
		{in: mcp.CallToolParamsRaw{Name: "x"}},
		{in: mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage(`null`)}},
		{in: mcp.CallToolParamsRaw{Name: "x", Meta: mcp.Meta{"io.modelcontextprotocol/clientInfo": "c"}}},
		{in: mcp.CallToolParamsRaw{Name: "x", Meta: mcp.Meta{"trace": "t", "progressToken": "p"}}, token: "p"},
		{in: mcp.CallToolParamsRaw{Name: "x", Arguments: json.RawMessage("{\"a\":\n1}")}},
		{in: mcp.CallToolParamsRaw{Name: "x", RequestState: "s"}},
	} {
		cl.token = tc.token
		for _, name := range []string{"echo", "a<&>\"\\\u2028b"} {
			got, err := toolCallParams(&tc.in, name, cl)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsAny(got, "\r\n") {
				t.Errorf("%+v: %q is not one line", tc.in, got)
			}
			want, err := json.Marshal(callParams(&tc.in, name, cl))
			if err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, got); err != nil {
				t.Fatalf("%+v: %s: %v", tc.in, got, err)
			}
			if !bytes.Equal(compact.Bytes(), want) {
				t.Errorf("%+v:\n got  %s\n want %s", tc.in, got, want)
			}
		}
	}
}
