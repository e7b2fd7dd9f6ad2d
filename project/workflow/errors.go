package workflow

import (
	"errors"
	"fmt"
)

// Kinds of failure a caller can test for with errors.Is.
var (
	ErrClosed           = errors.New("workflow engine is closed")
	ErrInvalidArgument  = errors.New("invalid argument")
	ErrWorkflowNotFound = errors.New("workflow not found")
	ErrWorkflowBroken   = errors.New("workflow definition is broken")
	ErrDynamicSource    = errors.New("dynamic workflow source unusable")
	ErrNotSkippable     = errors.New("phase cannot be skipped")
	ErrSessionNotFound  = errors.New("session not found")
	ErrPhaseCompleted   = errors.New("phase already completed")
	ErrWrongPhase       = errors.New("not the current phase")
	ErrPhaseLocked      = errors.New("phase not reached yet")
	ErrPhaseNotFound    = errors.New("phase not found")
	ErrTaskNotFound     = errors.New("task not found")
	ErrWorkflowComplete = errors.New("workflow already complete")
	ErrInvalidTarget    = errors.New("invalid target_file")
	ErrEvidenceTooLarge = errors.New("evidence too large")
	ErrContentTooLarge  = errors.New("content too large")
)

// errNoLambdas fails the lambda checks of an engine opened without a
// process to run them in (Options.Lambdas).
var errNoLambdas = errors.New("gate lambdas cannot run: the engine has no process to run them in")

// Error is a failure a client can act on: a message and the remediation line
// that tool results carry. It matches its Kind with errors.Is.
type Error struct {
	Kind        error
	Message     string
	Remediation string
}

// Error is the message, then the remediation on its own line.
func (e *Error) Error() string {
	if e.Remediation == "" {
		return e.Message
	}
	return e.Message + "\nremediation: " + e.Remediation
}

// Unwrap returns the kind.
func (e *Error) Unwrap() error { return e.Kind }

func newError(kind error, remediation, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Remediation: remediation}
}

// asToolError gives every error a remediation line: an *Error keeps its own;
// anything else is an internal failure.
func asToolError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrClosed) {
		return &Error{Kind: ErrClosed, Message: err.Error(), Remediation: "the project is being unmounted; reconnect and try again"}
	}
	return &Error{Kind: err, Message: "internal error: " + err.Error(), Remediation: "retry; if it persists, check the broker log"}
}
