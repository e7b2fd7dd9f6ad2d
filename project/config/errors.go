package config

import (
	"errors"
	"fmt"
)

// Error is a mistake in a configuration file: the file, where in it (line
// and column, 0 when unknown) and what is wrong, naming the key and the
// fix. Every error Load returns is one.
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

// IsError reports whether err is (or wraps) a configuration mistake.
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// keyError is a wrong value found after decoding: the key (dotted) and
// what is wrong. Load places it at the key's line and column.
type keyError struct {
	key string
	msg string
}

func (e *keyError) Error() string { return e.msg }

func keyErrorf(key, format string, a ...any) error {
	return &keyError{key: key, msg: fmt.Sprintf(format, a...)}
}
