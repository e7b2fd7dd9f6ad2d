package rpcmsg

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Member is one member of a JSON object as written: its name (between
// the quotes, with no escape) and its value.
type Member struct {
	Name, Value []byte
}

// maxMembers bounds the members Members reads: a message has a handful.
const maxMembers = 16

// Members reads data as one JSON object of plain members, appending them
// to buf (in order) without decoding or copying a value. ok is false
// for anything else, which the caller then decodes with encoding/json: a
// name with an escape, a control or a non-ASCII byte, a name twice (the
// last would win), a value that is not valid JSON, more than maxMembers
// members, or anything but whitespace after the object.
func Members(data []byte, buf []Member) (_ []Member, ok bool) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return buf, skipSpace(data, i+1) == len(data)
	}
	for {
		if i == len(data) || data[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(data) && data[end] != '"' {
			if c := data[end]; c == '\\' || c < 0x20 || c >= 0x80 {
				return nil, false
			}
			end++
		}
		if end == len(data) || len(buf) == maxMembers {
			return nil, false
		}
		name := data[i+1 : end]
		for _, m := range buf {
			if bytes.Equal(m.Name, name) {
				return nil, false
			}
		}
		i = skipSpace(data, end+1)
		if i == len(data) || data[i] != ':' {
			return nil, false
		}
		start := skipSpace(data, i+1)
		end, ok = valueEnd(data, start)
		if !ok || !json.Valid(data[start:end]) {
			return nil, false
		}
		buf = append(buf, Member{Name: name, Value: data[start:end]})
		i = skipSpace(data, end)
		switch {
		case i == len(data):
			return nil, false
		case data[i] == ',':
			i = skipSpace(data, i+1)
		case data[i] == '}':
			return buf, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// valueEnd finds where the JSON value starting at data[i] ends, without
// checking it (json.Valid does): a string to its closing quote, an object
// or an array to its closing bracket, anything else to the next
// delimiter.
func valueEnd(data []byte, i int) (int, bool) {
	if i == len(data) {
		return i, false
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, ok := stringEnd(data, i)
				if !ok {
					return end, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, true
		}
		i++
	}
	return i, true
}

// stringEnd finds the end of the string whose opening quote is data[i].
func stringEnd(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

// plainString is the text of a JSON string value with no escape and only
// printable ASCII, as encoding/json would decode it; ok is false for
// anything else.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	for _, c := range v[1 : len(v)-1] {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}

// fastDecode is Decode for a message of plain members (see Members) with
// a version, an id that is a plain string, a whole number of at most 15
// digits or null, a method that is a plain string, and no error member;
// ok is false for anything else. params and result are copied (into one
// allocation), as encoding/json copies a json.RawMessage.
func fastDecode(data []byte) (_ jsonrpc.Message, ok bool) {
	var arr [8]Member
	members, ok := Members(data, arr[:0])
	if !ok {
		return nil, false
	}
	var version, id, method, params, result []byte
	var hasMethod bool
	for _, m := range members {
		switch string(m.Name) {
		case "jsonrpc":
			version = m.Value
		case "id":
			id = m.Value
		case "method":
			method, hasMethod = m.Value, true
		case "params":
			params = m.Value
		case "result":
			result = m.Value
		case "error":
			return nil, false
		}
	}
	if v, ok := plainString(version); !ok || v != "2.0" {
		return nil, false
	}
	var mid jsonrpc.ID
	switch {
	case id == nil || string(id) == "null":
	case id[0] == '"':
		s, ok := plainString(id)
		if !ok {
			return nil, false
		}
		mid, _ = jsonrpc.MakeID(s)
	default:
		if len(id) > 16 || id[0] != '-' && (id[0] < '0' || id[0] > '9') {
			return nil, false
		}
		n, err := strconv.ParseInt(string(id), 10, 64)
		if err != nil || len(id) > 15 && id[0] != '-' {
			return nil, false
		}
		mid, _ = jsonrpc.MakeID(float64(n))
	}
	own := make([]byte, 0, len(params)+len(result))
	own = append(append(own, params...), result...)
	if params != nil {
		params = own[:len(params):len(params)]
	}
	if result != nil {
		result = own[len(own)-len(result):]
	}
	if hasMethod {
		name, ok := plainString(method)
		if !ok {
			return nil, false
		}
		return &jsonrpc.Request{Method: name, ID: mid, Params: params}, true
	}
	if !mid.IsValid() {
		return nil, false
	}
	return &jsonrpc.Response{ID: mid, Result: result}, true
}

// Elements reads data, a valid JSON array (a value Members returned),
// appending its elements to buf without decoding or copying them (an
// empty array gives an empty slice, not nil); ok is false when data is
// not an array.
func Elements(data []byte, buf [][]byte) (_ [][]byte, ok bool) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '[' {
		return nil, false
	}
	if buf == nil {
		buf = [][]byte{}
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return buf, true
	}
	for i < len(data) {
		end, ok := valueEnd(data, i)
		if !ok {
			return nil, false
		}
		buf = append(buf, data[i:end])
		i = skipSpace(data, end)
		if i == len(data) {
			return nil, false
		}
		if data[i] == ']' {
			return buf, true
		}
		i = skipSpace(data, i+1) // the comma
	}
	return nil, false
}

// PlainString is the text of a JSON string value with no escape and only
// printable ASCII, as encoding/json would decode it; ok is false for
// anything else (decode it with encoding/json).
func PlainString(v []byte) (string, bool) { return plainString(v) }
