package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseFile parses a configuration file's content: JSON when the name ends
// in .json (as praxis-os reads it: no comments), else YAML. A mistake is an
// *Error at the line and column where the text goes wrong.
//
// The bounds (MaxFileSize, MaxDepth) are checked first, by a pass over the
// text (lex) that no parser runs before; then yaml.v3 builds the document,
// whose nodes carry every key's position, and MaxValues is checked on it.
// yaml.v3 reports a syntax error at the line where the enclosing section
// began ("line 1" for a brace left open on line 2): the position comes
// from the pass over the text when it saw what went wrong, else the
// error keeps yaml.v3's words.
func ParseFile(file string, data []byte) (*yaml.Node, error) {
	if err := checkSize(file, int64(len(data))); err != nil {
		return nil, err
	}
	lx := lex(data)
	if lx.deep.line > 0 {
		return nil, &Error{File: file, Line: lx.deep.line, Column: lx.deep.col, Msg: fmt.Sprintf(
			"sections and lists nested more than %d deep: a config file needs a few levels (write the values out flat)", MaxDepth)}
	}
	if strings.EqualFold(filepath.Ext(file), ".json") {
		if err := jsonSyntax(file, data); err != nil {
			return nil, err
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntax(file, err, lx.problem)
	}
	if err := checkValues(file, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// jsonSyntax checks that data is one JSON value, with the position of the
// first mistake.
func jsonSyntax(file string, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := LineColumn(data, int(se.Offset)-1)
		return &Error{File: file, Line: line, Column: col, Msg: "invalid JSON: " + se.Error() + " (fix the JSON there; praxis-os reads this file too, so no comments or trailing commas)"}
	}
	return &Error{File: file, Msg: "invalid JSON: " + err.Error()}
}

// yamlSyntax turns yaml.v3's syntax error into an *Error: at the problem
// the pass over the text found, when it found one, else in yaml.v3's words.
func yamlSyntax(file string, v3err error, at *lexAt) error {
	if at != nil {
		return &Error{File: file, Line: at.line, Column: at.col, Msg: "invalid YAML: " + at.msg + " (fix the YAML there)"}
	}
	return &Error{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(v3err.Error(), "yaml: ") + " (fix the YAML there)"}
}

// LineColumn is the 1-based line and column (in bytes) of offset in data;
// an offset past the end is placed at the end.
func LineColumn(data []byte, offset int) (int, int) {
	offset = max(0, min(offset, len(data)))
	line := bytes.Count(data[:offset], []byte("\n")) + 1
	col := offset - (bytes.LastIndexByte(data[:offset], '\n') + 1) + 1
	return line, col
}
