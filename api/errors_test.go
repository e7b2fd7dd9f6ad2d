package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestErrorsAreMatchedByCode(t *testing.T) {
	err := fmt.Errorf("attach /p: %w", Errorf(http.StatusServiceUnavailable, CodeShuttingDown, "broker is shutting down: retry in a moment"))
	if !errors.Is(err, CodeShuttingDown) || errors.Is(err, CodeNotMounted) {
		t.Fatalf("errors.Is by code: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.Message != "broker is shutting down: retry in a moment" {
		t.Fatalf("errors.As: %#v", e)
	}
	if got := AsError(errors.New("disk on fire")); got.Status != 500 || got.Code != CodeInternal || got.Message != "disk on fire" {
		t.Errorf("AsError of a plain error = %#v", got)
	}
	// An error without a code (an older broker's) matches no code, not even "".
	old := &Error{Status: 400, Message: `malformed JSON body: json: unknown field "version"`}
	if errors.Is(old, Code("")) || errors.Is(old, CodeBadRequest) {
		t.Error("an error without a code matched a code")
	}
}

func TestParseErrorReadsBodiesOldAndNew(t *testing.T) {
	for _, tc := range []struct {
		body string
		code Code
		msg  string
	}{
		{`{"error":"project x is not mounted","code":"not_mounted"}`, CodeNotMounted, "project x is not mounted"},
		{`{"error":"from an older broker"}`, "", "from an older broker"},
		{`<html>proxy error</html>`, "", "broker answered 502: <html>proxy error</html>"},
		{``, "", "broker answered 502: "},
	} {
		got := ParseError(502, []byte(tc.body))
		if got.Status != 502 || got.Code != tc.code || got.Message != tc.msg {
			t.Errorf("ParseError(%q) = %#v", tc.body, got)
		}
	}
}
