package rpcmsg

import (
	"bytes"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var seeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"ping"}}}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":null}`,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: ping"}]}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":7,"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
	`{"jsonrpc":"2.0","id":[1],"method":"x"}`,
	`{"jsonrpc":"1.0","id":1,"method":"x"}`,
	`{"id":1,"method":"x"}`,
	`{"jsonrpc":2,"id":1,"method":"x"}`,
	`{"JSONRPC":"2.0","id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"Method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"Code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x"} trailing`,
	` {"jsonrpc":"2.0","id":1,"method":"x"}`,
	`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
	`null`, `""`, `{}`, `{"jsonrpc":"2.0"`, ``, `{"jsonrpc":"2.0","id":1,"method":"x"`,
	// What the fast path reads, and what it leaves to encoding/json.
	`{"result":{"content":[{"type":"text","text":"Echo: ping"}]},"jsonrpc":"2.0","id":"berth-call-12"}`,
	" {\"jsonrpc\" : \"2.0\" ,\n\"id\":-42, \"method\":\"tools/call\",\"params\": {\"a\":[1,{\"b\":\"}]\\\"\"}]} }\n",
	`{"jsonrpc":"2.0","id":123456789012345,"method":"x"}`,
	`{"jsonrpc":"2.0","id":-123456789012345,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1234567890123456789,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"x"}`,
	`{"jsonrpc":"2.0","id":-0,"method":"x"}`,
	`{"jsonrpc":"2.0","id":01,"method":"x"}`,
	`{"jsonrpc":"2.0","id":"a\"b","method":"x"}`,
	`{"jsonrpc":"2.0","id":"é","method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x\u0041"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1},"params":{"b":2}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":null}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`,
	`{"jsonrpc":"2.0","id":1,"result":[1 2]}`,
	`{"jsonrpc":"2.0","id":1,"result":tru}`,
	`{"jsonrpc":"2.0","id":1,"result":"\u00zz"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}} {"x":1}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\ud800"}}`,
	`{"jsonrpc":"2.0","id":1,"m\u0065thod":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x",}`,
	`{"jsonrpc":"2.0" "id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"notifications/progress","params":{"progressToken":"berth-1","progress":1}}`,
}

// TestFastDecodeTakesTheUsualMessages: the messages clients and servers
// send, call after call, are read by the fast path (and read as
// encoding/json reads them, which TestDecodeAsTheSDK checks).
func TestFastDecodeTakesTheUsualMessages(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"ping"}}}`,
		`{"result":{"content":[{"type":"text","text":"Echo: ping"}]},"jsonrpc":"2.0","id":"berth-call-12"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"berth-1","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
	} {
		data := []byte(s)
		got, ok := fastDecode(data)
		if !ok {
			t.Errorf("%s: not read by the fast path", s)
			continue
		}
		if err := compare(data); err != nil {
			t.Errorf("%s: %v", s, err)
		}
		// Its params and result are its own, as encoding/json's are.
		before := describe(got)
		for i := range data {
			data[i] = ' '
		}
		if after := describe(got); after != before {
			t.Errorf("%s: reads %s once its bytes are reused", s, after)
		}
	}
}

// TestDecodeAsTheSDK: Berth's decoding gives what the go-sdk's gives, or
// fails where it fails, on the seeds (and on what the fuzzer finds:
// go test -fuzz FuzzDecodeAsTheSDK ./broker/rpcmsg).
func TestDecodeAsTheSDK(t *testing.T) {
	for _, s := range seeds {
		if err := compare([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func FuzzDecodeAsTheSDK(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := compare(data); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
	})
}

// compare decodes data both ways and says how they differ.
func compare(data []byte) error {
	want, wantErr := jsonrpc.DecodeMessage(data)
	got, gotErr := Decode(data)
	switch {
	case wantErr != nil && gotErr != nil:
		return nil
	case wantErr != nil:
		return fmt.Errorf("the go-sdk refuses it (%v), Decode gives %s", wantErr, describe(got))
	case gotErr != nil:
		if !utf8.Valid(data) {
			return nil // encoding/json and the SDK's decoder differ on invalid UTF-8; no client sends it
		}
		return fmt.Errorf("the go-sdk reads %s, Decode fails: %v", describe(want), gotErr)
	}
	if g, w := describe(got), describe(want); g != w {
		return fmt.Errorf("Decode gives %s, the go-sdk %s", g, w)
	}
	return nil
}

func describe(m jsonrpc.Message) string {
	switch m := m.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%#v method=%q params=%q", m.ID.Raw(), m.Method, bytes.TrimSpace(m.Params))
	case *jsonrpc.Response:
		return fmt.Sprintf("response id=%#v result=%q error=%#v", m.ID.Raw(), bytes.TrimSpace(m.Result), m.Error)
	}
	return fmt.Sprintf("%T", m)
}

// TestCancelledID: the id a notifications/cancelled names, numeric or a
// string; nothing for another message or a malformed one.
func TestCancelledID(t *testing.T) {
	for msg, want := range map[string]any{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"stop"}}`: int64(7),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a-1"}}`:             "a-1",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`:              nil,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}`:               nil,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`:                                          nil,
		`{"jsonrpc":"2.0","id":3,"method":"notifications/cancelled","params":{"requestId":7}}`:          nil,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":7}}`:                  nil,
		`{"jsonrpc":"2.0","id":7,"result":{}}`:                                                          nil,
	} {
		m, err := Decode([]byte(msg))
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		id, ok := CancelledID(m)
		if ok != (want != nil) || ok && id.Raw() != want {
			t.Errorf("CancelledID(%s) = %v %v, want %v", msg, id.Raw(), ok, want)
		}
	}
}

// FuzzCancelledID: any message decoded is read for the id it cancels
// without panic; an id found is valid.
func FuzzCancelledID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		if id, ok := CancelledID(m); ok && !id.IsValid() {
			t.Fatalf("%q: invalid id", data)
		}
	})
}
