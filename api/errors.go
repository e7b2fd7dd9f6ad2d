package api

import (
	"errors"
	"fmt"
	"net/http"
)

// StatusError is an error with the HTTP status it should be answered with.
type StatusError struct {
	Code int
	Msg  string
}

func (e *StatusError) Error() string { return e.Msg }

// Errorf builds a StatusError.
func Errorf(code int, format string, args ...any) error {
	return &StatusError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// StatusOf is the HTTP status for err: a StatusError's code, else 500.
func StatusOf(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return http.StatusInternalServerError
}

// IsNotFound reports whether err is a 404 StatusError.
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }
