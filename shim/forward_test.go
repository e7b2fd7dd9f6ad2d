package shim

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestReadLinesSplitsTrimsAndCapsSize(t *testing.T) {
	big := strings.Repeat("x", MaxMessageBytes+10)
	in := "  {\"a\":1}  \n\n{\"b\":2}\n" + big + "\n{\"c\":3}"
	out := make(chan []byte, 10)
	readLines(strings.NewReader(in), out, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var got []string
	for l := range out {
		if l == nil {
			got = append(got, "<too big>")
			continue
		}
		got = append(got, string(l))
	}
	want := []string{`{"a":1}`, `{"b":2}`, "<too big>", `{"c":3}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestParseEnvelope(t *testing.T) {
	for _, tc := range []struct {
		in, id, method string
		ok             bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "1", "tools/call", true},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, `"a"`, "", true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "notifications/initialized", true},
		{`{"id":null,"error":{}}`, "", "", true},
		{`[1,2]`, "", "", false},
		{`nope`, "", "", false},
	} {
		id, method, ok := parseEnvelope([]byte(tc.in))
		if id != tc.id || method != tc.method || ok != tc.ok {
			t.Errorf("parseEnvelope(%s) = %q %q %v", tc.in, id, method, ok)
		}
	}
}

// chunkReader returns its data in pieces of the given sizes (cycled), so
// that lines arrive split across reads and several lines in one read.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)]) + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// wantLines is the reference framing: newline-separated, trimmed, empty
// lines dropped.
func wantLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func FuzzReadLines(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}"), []byte{0})
	f.Add([]byte("\n\n\r\n"), []byte{3, 1})
	f.Add([]byte("{\"a\":\"\xff\xfe\"}\n\xc3\x28\n"), []byte{1})
	f.Add([]byte("{\"x\":1}{\"y\":2}\n  \t\n{\"z\":3}\r\n"), []byte{200, 7})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		out := make(chan []byte)
		go readLines(&chunkReader{data: data, sizes: sizes}, out, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		var got [][]byte
		for l := range out {
			if len(l) == 0 || bytes.Contains(l, []byte("\n")) {
				t.Fatalf("bad line %q", l)
			}
			got = append(got, l)
		}
		want := wantLines(data)
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d = %q, want %q", i, got[i], want[i])
			}
			// Every line gets a verdict: forwarded (valid JSON) or a
			// JSON-RPC error; never a panic.
			if reply := checkLine(got[i]); reply != nil && !json.Valid(reply) {
				t.Fatalf("reply %q is not JSON", reply)
			}
		}
	})
}

func TestTenMiBLineIsForwardedWhole(t *testing.T) {
	big := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"s":"` + strings.Repeat("y", 10<<20) + `"}}}`)
	in := append(append([]byte("{\"a\":1}\n"), big...), "\n{\"b\":2}\n"...)
	out := make(chan []byte, 4)
	readLines(&chunkReader{data: in, sizes: []byte{255, 17, 3}}, out, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var got [][]byte
	for l := range out {
		got = append(got, l)
	}
	if len(got) != 3 || !bytes.Equal(got[1], big) || checkLine(got[1]) != nil {
		t.Fatalf("got %d lines; the 10 MiB one intact: %v", len(got), len(got) > 1 && bytes.Equal(got[1], big))
	}
}

func TestCheckLineAnswersWhatCannotBeForwarded(t *testing.T) {
	for _, tc := range []struct {
		line []byte
		code string
	}{
		{nil, "-32600"},
		{[]byte("not json"), "-32700"},
		{[]byte("\xc3\x28"), "-32700"},
		{[]byte(`{"jsonrpc":"2.0","id":1`), "-32700"},
		{[]byte(`{"jsonrpc":"2.0","method":"x","params":{"s":"\xff"}}`), "-32700"}, // \x is no JSON escape
	} {
		reply := checkLine(tc.line)
		if reply == nil || !bytes.Contains(reply, []byte(`"code":`+tc.code)) || !bytes.Contains(reply, []byte(`"id":null`)) {
			t.Errorf("checkLine(%q) = %s, want error %s with id null", tc.line, reply, tc.code)
		}
	}
	for _, line := range [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"x","params":{"s":"\u00e9"}}`),
		[]byte("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"s\":\"\xff\"}}"), // invalid UTF-8 in a string: the broker's to judge
	} {
		if reply := checkLine(line); reply != nil {
			t.Errorf("checkLine(%q) answered %s, want it forwarded", line, reply)
		}
	}
}

func TestErrorResponseIsValidJSONRPC(t *testing.T) {
	raw := errorResponse(`"x"`, -32603, `quote " and newline
`)
	if !bytes.Contains(raw, []byte(`"id":"x"`)) || !bytes.Contains(raw, []byte(`"code":-32603`)) {
		t.Fatalf("%s", raw)
	}
}
