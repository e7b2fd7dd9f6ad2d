package shim

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestReadLinesSplitsTrimsAndCapsSize(t *testing.T) {
	big := strings.Repeat("x", MaxMessageBytes+10)
	in := "  {\"a\":1}  \n\n{\"b\":2}\n" + big + "\n{\"c\":3}"
	out := make(chan []byte, 10)
	readLines(strings.NewReader(in), out, slog.New(slog.NewTextHandler(io.Discard, nil)))
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

func FuzzReadLines(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}"))
	f.Add([]byte("\n\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := make(chan []byte)
		go readLines(bytes.NewReader(data), out, slog.New(slog.NewTextHandler(io.Discard, nil)))
		for l := range out {
			if len(l) == 0 || bytes.Contains(l, []byte("\n")) {
				t.Fatalf("bad line %q", l)
			}
		}
	})
}

func TestErrorResponseIsValidJSONRPC(t *testing.T) {
	raw := errorResponse(`"x"`, -32603, `quote " and newline
`)
	if !bytes.Contains(raw, []byte(`"id":"x"`)) || !bytes.Contains(raw, []byte(`"code":-32603`)) {
		t.Fatalf("%s", raw)
	}
}
