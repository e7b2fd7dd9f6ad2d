// Package typedtool registers Berth's own MCP tools with typed arguments
// and results, as [mcp.AddTool] does, with the JSON work done by
// encoding/json.
//
// The go-sdk's typed handler decodes a call three times through its
// internal decoder (the arguments into a map to apply the schema, into
// the arguments type, the result back for its schema), and that decoder
// starts every read with a 32 KiB buffer: about 100 KiB of garbage per
// call of a tool whose arguments are "{}", most of what such a call cost
// on a project's port. [Add] keeps everything else [mcp.AddTool] does, in
// the same order: schemas inferred from the types (once per process),
// defaults applied and arguments validated before the handler runs, a bad
// argument or a plain error answered as an isError result and a
// *jsonrpc.Error as a protocol error, the result validated against its
// schema (unless its type cannot encode a value the schema refuses: see
// encodesValid) and sent both as structured content and as text.
package typedtool

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Add registers t on s with the typed handler h, as [mcp.AddTool] does. It
// panics, as mcp.AddTool does, on a type or schema that cannot serve.
func Add[In, Out any](s *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	tt, th, err := tool(t, h)
	if err != nil {
		panic(fmt.Sprintf("typedtool.Add: tool %q: %v", t.Name, err))
	}
	s.AddTool(tt, th)
}

// tool is the tool as served and its raw handler.
func tool[In, Out any](t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) (*mcp.Tool, mcp.ToolHandler, error) {
	tt := *t
	if reflect.TypeFor[In]() == reflect.TypeFor[any]() && t.InputSchema == nil {
		tt.InputSchema = anyInput
	}
	in, _, err := schemaOf[In](&tt.InputSchema)
	inType := reflect.TypeFor[In]()
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	var out *jsonschema.Resolved
	var elemZero any // the zero of Out's element when Out is a pointer: sent instead of null
	trusted := false // every Out json.Marshal encodes satisfies out: no need to validate one
	if t.OutputSchema != nil || reflect.TypeFor[Out]() != reflect.TypeFor[any]() {
		if out, elemZero, err = schemaOf[Out](&tt.OutputSchema); err != nil {
			return nil, nil, fmt.Errorf("output schema: %w", err)
		}
		trusted = t.OutputSchema == nil && out != nil && encodesValid(elemType(reflect.TypeFor[Out]()), out.Schema())
	}
	// Absent or empty arguments ({}) always come out of the schema the
	// same: worked out once, here.
	noArgs, noArgsErr := applySchema(nil, in, false, inType, true)
	return &tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := noArgs, noArgsErr
		if a := req.Params.Arguments; len(a) > 0 && string(a) != "{}" {
			args, err = applySchema(a, in, false, inType, true)
		}
		if err != nil {
			return errorResult(fmt.Errorf("validating \"arguments\": %v", err)), nil
		}
		var v In
		if args != nil {
			if err := json.Unmarshal(args, &v); err != nil {
				return errorResult(err), nil
			}
		}
		res, o, err := h(ctx, req, v)
		if err != nil {
			if wire, ok := err.(*jsonrpc.Error); ok {
				return nil, wire
			}
			return errorResult(err), nil
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		var value any = o
		switch {
		case res.InputRequests != nil:
			value = nil // content and input requests never go together
		case elemZero != nil:
			var zero Out
			if any(o) == any(zero) {
				value = elemZero
			}
		}
		if value == nil {
			return res, nil
		}
		raw, err := json.Marshal(value)
		if err != nil {
			return nil, fmt.Errorf("marshaling output: %w", err)
		}
		if raw, err = applySchema(raw, out, true, nil, !trusted); err != nil {
			return nil, fmt.Errorf("validating tool output: %w", err)
		}
		res.StructuredContent = json.RawMessage(raw)
		if res.Content == nil {
			res.Content = []mcp.Content{&mcp.TextContent{Text: string(raw)}}
		} else if !isObject(raw) {
			res.Content = append(res.Content, &mcp.TextContent{Text: string(raw)})
		}
		return res, nil
	}, nil
}

// anyInput is the input schema of a tool whose arguments type is any.
var anyInput = &jsonschema.Schema{Type: "object"}

func errorResult(err error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	res.SetError(err)
	return res
}

// schemas holds the process's schemas: by Go type when inferred, by
// pointer when a tool brings its own. Every project's server registers
// the same tools, and each resolved schema is a tree of its own.
var schemas struct {
	byType   sync.Map // reflect.Type -> inferred
	bySchema sync.Map // *jsonschema.Schema -> *jsonschema.Resolved
}

type inferred struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

// schemaOf sets *field to T's inferred schema when it is nil, and returns
// the resolved schema; zero is the zero value of T's element when T is a
// pointer. A schema given as another type than *jsonschema.Schema is
// converted through JSON, as the go-sdk does.
func schemaOf[T any](field *any) (resolved *jsonschema.Resolved, zero any, err error) {
	rt := reflect.TypeFor[T]()
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
		zero = reflect.Zero(rt).Interface()
	}
	if *field == nil {
		if v, ok := schemas.byType.Load(rt); ok {
			inf := v.(inferred)
			*field = inf.schema
			return inf.resolved, zero, nil
		}
		s, err := jsonschema.ForType(rt, &jsonschema.ForOptions{})
		if err != nil {
			return nil, zero, err
		}
		r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			return nil, zero, err
		}
		v, _ := schemas.byType.LoadOrStore(rt, inferred{s, r})
		inf := v.(inferred)
		*field = inf.schema
		return inf.resolved, zero, nil
	}
	s, ok := (*field).(*jsonschema.Schema)
	if ok {
		if r, ok := schemas.bySchema.Load(s); ok {
			return r.(*jsonschema.Resolved), zero, nil
		}
	} else {
		raw, err := json.Marshal(*field)
		if err != nil {
			return nil, zero, err
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, zero, err
		}
	}
	if s == nil {
		return nil, zero, fmt.Errorf("schema is nil for type %v", rt)
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, zero, err
	}
	if ok {
		v, _ := schemas.bySchema.LoadOrStore(s, r)
		r = v.(*jsonschema.Resolved)
	}
	return r, zero, nil
}

// applySchema validates data against resolved (unless validate is false)
// and applies its defaults, as the go-sdk does: arguments are read as an
// object (absent ones as {}), a result as any value (null as {} when the
// schema is an object's).
// Arguments come back without the members that name a field of in only
// in another case: the go-sdk matches member names exactly, encoding/json
// without case (which matters where a schema admits unknown members).
func applySchema(data json.RawMessage, resolved *jsonschema.Resolved, forOutput bool, in reflect.Type, validate bool) (json.RawMessage, error) {
	if resolved == nil {
		return data, nil
	}
	var v any
	if !forOutput {
		m := map[string]any{}
		if len(data) > 0 {
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("unmarshaling arguments: %w", err)
			}
		}
		v = m
	} else if len(data) > 0 {
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("unmarshaling output: %w", err)
		}
	}
	applied := false
	if _, ok := v.(map[string]any); ok {
		if err := resolved.ApplyDefaults(&v); err != nil {
			return nil, fmt.Errorf("applying schema defaults:\n%w", err)
		}
		applied = true
	} else if forOutput && v == nil && resolved.Schema().Type == "object" {
		v = map[string]any{}
		if err := resolved.ApplyDefaults(&v); err != nil {
			return nil, fmt.Errorf("applying schema defaults:\n%w", err)
		}
		applied = true
	}
	if validate {
		if err := resolved.Validate(&v); err != nil {
			return nil, err
		}
	}
	if in != nil {
		dropFolded(v, in)
	}
	if !applied {
		return data, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshalling with defaults: %v", err)
	}
	return raw, nil
}

// elemType is t without its pointers, as schemaOf infers a schema.
func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// encodesValid reports whether every value of t, as json.Marshal encodes
// it, satisfies s, the schema jsonschema.ForType inferred for t: t is made
// of booleans, numbers, strings, structs of them (each member required
// unless omitted when empty, and no others), pointers and slices (null
// admitted) and arrays, with nothing encoded its own way. Validating such
// a tool's every result against its schema is most of what a small
// tool's call cost (an 8-member result: 13 us of 33). Anything else
// (maps, whose nil encodes as null where the schema wants an object;
// []byte, encoded as base64 where the schema wants an array of numbers;
// members with ",string"; embedded structs; names encoding/json would not
// take as they are) is validated on every call, as the go-sdk validates it.
func encodesValid(t reflect.Type, s *jsonschema.Schema) bool {
	if s == nil || t.Implements(marshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(marshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.Interface:
		return s.Type == "" && len(s.Types) == 0 && s.Not == nil // unrestricted, as ForType infers it
	case reflect.Pointer:
		if !slices.Contains(s.Types, "null") {
			return false
		}
		e := elemType(t)
		if e.Kind() != reflect.Slice { // a slice's schema admits null already
			s = nullable(s)
		}
		return encodesValid(e, s)
	case reflect.Slice:
		return slices.Contains(s.Types, "null") && t.Elem().Kind() != reflect.Uint8 && encodesValid(t.Elem(), s.Items)
	case reflect.Array:
		return t.Elem().Kind() != reflect.Uint8 && encodesValid(t.Elem(), s.Items)
	case reflect.Struct:
		if s.AdditionalProperties == nil {
			return false
		}
		seen := map[string]bool{}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return false
			}
			if !f.IsExported() {
				continue
			}
			tag, hasTag := f.Tag.Lookup("json")
			name, opts, _ := strings.Cut(tag, ",")
			if hasTag && tag == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			} else if !plainName(name) {
				return false
			}
			if seen[name] || slices.Contains(strings.Split(opts, ","), "string") || !encodesValid(f.Type, s.Properties[name]) {
				return false
			}
			seen[name] = true
		}
		return true
	}
	return false
}

var (
	marshaler     = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// nullable is s, a pointer's schema, as the schema of what it points to:
// ForType writes a pointer's schema as its element's with "null" added to
// the element's type.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	c := *s
	c.Types = slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
	if len(c.Types) == 1 {
		c.Type, c.Types = c.Types[0], nil
	}
	return &c
}

// plainName reports whether name is a member name encoding/json takes from
// a tag as it is (letters, digits, '_', '-' and '.').
func plainName(name string) bool {
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("_-.", r) {
			return false
		}
	}
	return name != ""
}

// isObject reports whether data is a JSON object.
func isObject(data []byte) bool {
	b := bytes.TrimLeft(data, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// dropFolded removes, from v (decoded JSON) read as t, every object member
// whose name is a field of the struct there only in another case.
func dropFolded(v any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := v.(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			fields := fieldsOf(t)
			for name, member := range v {
				if ft, ok := fields.exact[name]; ok {
					dropFolded(member, ft)
				} else if fields.folded[fold(name)] {
					delete(v, name)
				}
			}
		case reflect.Map:
			for _, member := range v {
				dropFolded(member, t.Elem())
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for _, e := range v {
				dropFolded(e, t.Elem())
			}
		}
	}
}

// fields are a struct's JSON member names, as encoding/json names them.
type fields struct {
	exact  map[string]reflect.Type
	folded map[string]bool // the names folded (fold)
}

var fieldCache sync.Map // reflect.Type -> fields

func fieldsOf(t reflect.Type) fields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(fields)
	}
	f := fields{exact: map[string]reflect.Type{}, folded: map[string]bool{}}
	var add func(t reflect.Type, depth int)
	add = func(t reflect.Type, depth int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct && depth < 8 {
					add(ft, depth+1)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if _, ok := f.exact[name]; !ok {
				f.exact[name] = sf.Type
			}
			f.folded[fold(name)] = true
		}
	}
	add(t, 0)
	fieldCache.Store(t, f)
	return f
}

// fold is name with every rune replaced by the smallest of its case
// folding set: two names encoding/json matches fold alike.
func fold(name string) string {
	return strings.Map(func(r rune) rune {
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				return r2
			}
			r = r2
		}
	}, name)
}
