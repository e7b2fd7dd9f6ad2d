package ideconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is one name/value pair of a JSON object.
type member struct {
	Key   string
	Value json.RawMessage
}

// object is a JSON object's members in the order of the file, so a merge
// keeps the user's layout of keys.
type object []member

// parseObject reads data, which must hold exactly one JSON object; blank
// data is an empty object.
func parseObject(data []byte) (object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return object{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, eofError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, notObjectError{kindOf(tok)}
	}
	var o object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, eofError(err)
		}
		key, _ := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, eofError(err)
		}
		o = append(o, member{key, raw})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, eofError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("invalid JSON: more data after the top-level object")
		}
		return nil, err
	}
	return o, nil
}

// notObjectError reports JSON that is valid but not an object.
type notObjectError struct{ kind string }

func (e notObjectError) Error() string { return "is " + e.kind + ", not an object" }

func eofError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of the file")
	}
	return err
}

func kindOf(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// get returns the value of key; of duplicate keys the last counts, as it
// does for the apps that read the file.
func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// set gives key the value v: in place of its last occurrence (earlier
// duplicates are dropped), or appended.
func (o *object) set(key string, v json.RawMessage) {
	last := -1
	for i, m := range *o {
		if m.Key == key {
			last = i
		}
	}
	if last < 0 {
		*o = append(*o, member{key, v})
		return
	}
	kept := make(object, 0, len(*o))
	for i, m := range *o {
		switch {
		case i == last:
			m.Value = v
		case m.Key == key:
			continue
		}
		kept = append(kept, m)
	}
	*o = kept
}

// marshal writes o indented by two spaces, with a final newline.
func (o object) marshal() ([]byte, error) {
	if len(o) == 0 {
		return []byte("{}\n"), nil
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range o {
		k, err := marshalNoEscape(m.Key)
		if err != nil {
			return nil, err
		}
		b.WriteString("  ")
		b.Write(k)
		b.WriteString(": ")
		if err := json.Indent(&b, m.Value, "  ", "  "); err != nil {
			return nil, fmt.Errorf("value of %q: %w", m.Key, err)
		}
		if i < len(o)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// compact is o as one line of JSON.
func (o object) compact() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(m.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, m.Value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without escaping <, > and & (paths and
// names stay readable).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
