package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	goccy "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
	"go.yaml.in/yaml/v3"
)

// ParseFile parses a configuration file's content: JSON when the name ends
// in .json (as praxis-os reads it: no comments), else YAML. A syntax error
// is an *Error at the line and column where the text goes wrong.
//
// yaml.v3 builds the document (its nodes carry every key's position and
// comments) but reports a syntax error at the line where the enclosing
// construct began ("line 1" for a brace left open on line 2), so the
// position of a YAML syntax error comes from goccy/go-yaml's parser, which
// points at the offending character.
func ParseFile(file string, data []byte) (*yaml.Node, error) {
	if strings.EqualFold(filepath.Ext(file), ".json") {
		if err := jsonSyntax(file, data); err != nil {
			return nil, err
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntax(file, data, err)
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

// yamlSyntax turns yaml.v3's syntax error into an *Error at the position
// goccy/go-yaml finds; when goccy accepts the text, yaml.v3's message stands.
func yamlSyntax(file string, data []byte, v3err error) error {
	msg := strings.TrimPrefix(v3err.Error(), "yaml: ")
	if _, err := parser.ParseBytes(data, 0); err != nil {
		var ge goccy.Error
		if errors.As(err, &ge) && ge.GetToken() != nil {
			pos := ge.GetToken().Position
			return &Error{File: file, Line: pos.Line, Column: pos.Column, Msg: "invalid YAML: " + ge.GetMessage() + " (fix the YAML there)"}
		}
	}
	return &Error{File: file, Msg: "invalid YAML: " + msg + " (fix the YAML there)"}
}

// LineColumn is the 1-based line and column (in bytes) of offset in data;
// an offset past the end is placed at the end.
func LineColumn(data []byte, offset int) (int, int) {
	offset = max(0, min(offset, len(data)))
	line := bytes.Count(data[:offset], []byte("\n")) + 1
	col := offset - (bytes.LastIndexByte(data[:offset], '\n') + 1) + 1
	return line, col
}
