package typedtool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type args struct {
	Text  string   `json:"text" jsonschema:"what to say"`
	Times int      `json:"times,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

type result struct {
	Said  string `json:"said"`
	HTML  string `json:"html"`
	Count int    `json:"count"`
}

// withDefault is an explicit schema with a default and unknown keys admitted.
var withDefault = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"text":  {Type: "string"},
		"times": {Type: "integer", Default: json.RawMessage("3"), Minimum: jsonschema.Ptr(1.0)},
	},
}

// register adds the same tools with add: typed, with a pointer result, with
// any arguments and no result, and with an explicit schema.
func register(s *mcp.Server, add func(*mcp.Server, string, *jsonschema.Schema, func(args) (*result, error))) {
	add(s, "say", nil, func(a args) (*result, error) {
		switch a.Text {
		case "fail":
			return nil, errors.New("it failed <here> & there")
		case "rpc":
			return nil, &jsonrpc.Error{Code: -32042, Message: "a code of the tool's"}
		case "nil":
			return nil, nil
		}
		return &result{Said: a.Text, HTML: "<b> & \u2028", Count: a.Times + len(a.Tags)}, nil
	})
	add(s, "defaults", withDefault, func(a args) (*result, error) { return &result{Said: a.Text, Count: a.Times}, nil })
}

func viaSDK(s *mcp.Server, name string, schema *jsonschema.Schema, f func(args) (*result, error)) {
	t := &mcp.Tool{Name: name}
	if schema != nil {
		t.InputSchema = schema
	}
	mcp.AddTool(s, t, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, *result, error) {
		r, err := f(a)
		return nil, r, err
	})
}

func viaTypedTool(s *mcp.Server, name string, schema *jsonschema.Schema, f func(args) (*result, error)) {
	t := &mcp.Tool{Name: name}
	if schema != nil {
		t.InputSchema = schema
	}
	Add(s, t, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, *result, error) {
		r, err := f(a)
		return nil, r, err
	})
}

// pair is one client session on a server of each kind.
type pair struct{ sdk, own *mcp.ClientSession }

var pairs = sync.OnceValues(func() (pair, error) {
	connect := func(add func(*mcp.Server, string, *jsonschema.Schema, func(args) (*result, error))) (*mcp.ClientSession, error) {
		s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		register(s, add)
		mcp.AddTool(s, &mcp.Tool{Name: "any"}, func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	}
	sdk, err := connect(viaSDK)
	if err != nil {
		return pair{}, err
	}
	own, err := connect(viaTypedTool)
	return pair{sdk, own}, err
})

// outcome is a call's answer as JSON, or its protocol error.
func outcome(cs *mcp.ClientSession, name string, arguments json.RawMessage) string {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		return "error: " + err.Error()
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return "marshal: " + err.Error()
	}
	return string(raw)
}

// TestAddAnswersAsTheGoSDK: a tool registered with Add answers every call
// as the same tool registered with mcp.AddTool: results (with characters
// JSON escapes), a nil pointer result, tool errors, a JSON-RPC error,
// arguments the schema refuses, defaults applied, absent arguments.
func TestAddAnswersAsTheGoSDK(t *testing.T) {
	p, err := pairs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, args string }{
		{"say", `{"text":"hi","times":2,"tags":["a","b"]}`},
		{"say", `{"text":"fail"}`},
		{"say", `{"text":"rpc"}`},
		{"say", `{"text":"nil"}`},
		{"say", `{"text":5}`},
		{"say", `{"Text":"case"}`},
		{"say", `{}`},
		{"say", `null`},
		{"say", ``},
		{"say", `{"text":"x","unknown":1}`},
		{"defaults", `{"text":"d"}`},
		{"defaults", `{"text":"d","times":0}`},
		{"defaults", `{"text":"d","extra":[1,{"a":null}]}`},
		{"any", `{"whatever":true}`},
		{"any", `{}`},
	} {
		var raw json.RawMessage
		if c.args != "" {
			raw = json.RawMessage(c.args)
		}
		if sdk, own := outcome(p.sdk, c.name, raw), outcome(p.own, c.name, raw); sdk != own {
			t.Errorf("%s %s:\n mcp.AddTool   %s\n typedtool.Add %s", c.name, c.args, sdk, own)
		}
	}
}

// TestSchemasAreInferredOnce: every server's copy of a tool carries the
// same schemas (inferred and resolved once per process), so that a
// project's server adds none of its own.
func TestSchemasAreInferredOnce(t *testing.T) {
	h := func(context.Context, *mcp.CallToolRequest, args) (*mcp.CallToolResult, result, error) {
		return nil, result{}, nil
	}
	a, _, err := tool(&mcp.Tool{Name: "a"}, h)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := tool(&mcp.Tool{Name: "b"}, h)
	if err != nil {
		t.Fatal(err)
	}
	if a.InputSchema != b.InputSchema || a.OutputSchema != b.OutputSchema {
		t.Fatal("two registrations of the same types carry schemas of their own")
	}
	r1, _, _ := schemaOf[args](new(any))
	r2, _, _ := schemaOf[args](new(any))
	if r1 != r2 {
		t.Fatal("the resolved schema of one type was resolved twice")
	}
}

// FuzzAdd: for any arguments, a tool registered with Add answers as the
// same tool registered with mcp.AddTool: the same result, or an error of
// the same kind (the decoders' messages differ in wording).
func FuzzAdd(f *testing.F) {
	for _, seed := range []string{`{"text":"hi","times":2}`, `{"text":"fail"}`, `{"times":1e400}`, `{"text":"\u00e9\ud800"}`,
		`{"tags":[null]}`, `{"text":"x","times":-1}`, `[]`, `"text"`, `{"text":"nil","tags":["<>"]}`} {
		f.Add("say", seed)
		f.Add("defaults", seed)
	}
	p, err := pairs()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, arguments string) {
		if name != "say" && name != "defaults" && name != "any" || !json.Valid([]byte(arguments)) {
			return
		}
		sdk, own := kind(p.sdk, name, json.RawMessage(arguments)), kind(p.own, name, json.RawMessage(arguments))
		if sdk != own {
			t.Fatalf("%s %s:\n mcp.AddTool   %s\n typedtool.Add %s", name, arguments, sdk, own)
		}
	})
}

// kind is a call's result, "isError" for a tool error or "error" for a
// protocol error.
func kind(cs *mcp.ClientSession, name string, arguments json.RawMessage) string {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: arguments})
	switch {
	case err != nil:
		return "error"
	case res.IsError:
		return "isError"
	}
	raw, _ := json.Marshal(res)
	return string(raw)
}

type flat struct {
	Name  string  `json:"name"`
	Count int64   `json:"count"`
	Small int8    `json:"small,omitempty"`
	Big   uint64  `json:"big"`
	Ratio float32 `json:"ratio"`
	On    bool    `json:"on"`
	Plain string
	Dash  string `json:"-,"`
	skip  string
	Drop  string `json:"-"`
}

type nested struct {
	Items []flat      `json:"items"`
	Ptr   *flat       `json:"ptr"`
	Pair  [2]int      `json:"pair"`
	Any   any         `json:"any"`
	Deep  *[]*float64 `json:"deep,omitempty"`
}

type withMap struct {
	M map[string]int `json:"m"`
}

type withBytes struct {
	B []byte `json:"b"`
}

type withString struct {
	N int `json:"n,string"`
}

type withTime struct {
	T time.Time `json:"t"`
}

type embedded struct {
	flat
	Extra string `json:"extra"`
}

type oddName struct {
	V string `json:"a\"b"`
}

// TestEncodesValid: the result types whose every encoding satisfies their
// inferred schema are told apart from those that do not (maps, []byte,
// ",string", time.Time, embedded structs, names encoding/json rewrites), and
// every value of a trusted type, as json.Marshal encodes it, validates.
func TestEncodesValid(t *testing.T) {
	check := func(name string, rt reflect.Type, want bool, values ...any) {
		t.Helper()
		r, _, err := schemaOfType(rt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := encodesValid(rt, r.Schema()); got != want {
			t.Errorf("encodesValid(%s) = %v, want %v", name, got, want)
		}
		for _, v := range values {
			raw, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var decoded any
			if err := json.Unmarshal(raw, &decoded); err != nil {
				t.Fatal(err)
			}
			if err := r.Validate(&decoded); err != nil {
				t.Errorf("%s: %s does not validate: %v", name, raw, err)
			}
		}
	}
	f := 1.5
	check("flat", reflect.TypeFor[flat](), true, flat{}, flat{Name: "<é>\u2028", Count: -1 << 62, Small: -128, Big: 1<<64 - 1, Ratio: 0.1, On: true, Plain: "p", Dash: "d"})
	check("nested", reflect.TypeFor[nested](), true, nested{}, nested{Items: []flat{{}}, Ptr: &flat{}, Any: map[string]any{"x": []any{1, "y"}}, Deep: &[]*float64{nil, &f}})
	check("bool", reflect.TypeFor[bool](), true, true)
	check("map", reflect.TypeFor[withMap](), false)
	check("[]byte", reflect.TypeFor[withBytes](), false)
	check(",string", reflect.TypeFor[withString](), false)
	check("time.Time", reflect.TypeFor[withTime](), false)
	check("embedded", reflect.TypeFor[embedded](), false)
	check("odd name", reflect.TypeFor[oddName](), false)
}

// schemaOfType is schemaOf for a reflect.Type.
func schemaOfType(rt reflect.Type) (*jsonschema.Resolved, any, error) {
	s, err := jsonschema.ForType(rt, &jsonschema.ForOptions{})
	if err != nil {
		return nil, nil, err
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	return r, nil, err
}

// TestTrustedResultAnswersAsTheGoSDK: a tool whose result type is trusted
// (its results are not validated on each call) and whose arguments are
// absent or {} (worked out once) answers as the same tool of mcp.AddTool.
func TestTrustedResultAnswersAsTheGoSDK(t *testing.T) {
	h := func(_ context.Context, _ *mcp.CallToolRequest, a map[string]any) (*mcp.CallToolResult, nested, error) {
		f := 2.0
		return nil, nested{Items: []flat{{Name: "<a & b>", Count: 1 << 60, Big: 1<<64 - 1, Ratio: 0.3}}, Any: a, Deep: &[]*float64{&f, nil}}, nil
	}
	connect := func(add func(*mcp.Server)) *mcp.ClientSession {
		s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		add(s)
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	sdk := connect(func(s *mcp.Server) { mcp.AddTool(s, &mcp.Tool{Name: "n"}, h) })
	own := connect(func(s *mcp.Server) { Add(s, &mcp.Tool{Name: "n"}, h) })
	for _, args := range []string{``, `{}`, `{"k":[1,"<"]}`, `null`} {
		var raw json.RawMessage
		if args != "" {
			raw = json.RawMessage(args)
		}
		// Twice: the second call of no arguments takes what the first worked out.
		for range 2 {
			if a, b := outcome(sdk, "n", raw), outcome(own, "n", raw); a != b {
				t.Errorf("%s:\n mcp.AddTool   %s\n typedtool.Add %s", args, a, b)
			}
		}
	}
}
