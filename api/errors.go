package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Code is the machine-readable reason of an error answer: programs decide
// on it, never on the message, which is for people and may be reworded.
// A Code is an error too, so errors.Is(err, api.CodeNotMounted) tells
// whether err is (or wraps) an *Error with that code.
type Code string

func (c Code) Error() string { return string(c) }

// The codes of the control API and of project ports' HTTP refusals.
// Codes are never renamed or reused; new ones may be added.
const (
	CodeBadRequest     Code = "bad_request"         // the request itself is wrong (malformed JSON, a bad field)
	CodeBodyTooLarge   Code = "body_too_large"      // the request body is over the limit
	CodeNotProject     Code = "not_project"         // the root does not exist or has no .praxis-os/
	CodeProjectBroken  Code = "project_unavailable" // the project cannot be opened (its config does not load)
	CodeNotMounted     Code = "not_mounted"         // no such project is mounted
	CodeLeaseNotHeld   Code = "lease_not_held"      // the lease was already released
	CodeNoEndpoint     Code = "no_such_endpoint"    // no route for this path
	CodeMethod         Code = "method_not_allowed"  // the route exists, not for this method
	CodeShuttingDown   Code = "shutting_down"       // the broker is stopping: retry once it is gone
	CodePortsExhausted Code = "ports_exhausted"     // every port of ports.start..ports.end is taken
	CodeNotAutostarted Code = "not_autostarted"     // if_unheld shutdown of a broker a user or service started
	CodeStillHeld      Code = "still_held"          // if_unheld shutdown while others hold mounts
	CodeSearchOff      Code = "search_off"          // the project's rag tool group is off
	CodeBadQuery       Code = "bad_query"           // the search query cannot be run
	CodeForbidden      Code = "forbidden"           // a foreign Origin or a non-loopback Host
	CodeUnauthorized   Code = "unauthorized"        // missing or wrong bearer token (auth: token)
	CodeNotOwner       Code = "not_owner"           // the connection comes from another account, or one that cannot be told
	CodeBusy           Code = "too_many_sessions"   // the project's mcp.max_sessions is reached
	CodeNoSession      Code = "no_such_session"     // the project has no MCP session with that id
	CodeInternal       Code = "internal"            // the broker failed; its log says why

	CodeBrowserRequest Code = "browser_request" // a mutating control-API request a web page could send (an Origin, a form or text body) without Berth-Client or the token
	CodeRelativeRoot   Code = "relative_root"   // POST /projects with a relative root
	CodePIDRequired    Code = "pid_required"    // a shim attach without the pid of a live process (missing, 0, 1 or exited)
	CodeLeaseRequired  Code = "lease_required"  // /projects/{id}/mcp without the Berth-Lease header
	CodeHolderNotLive  Code = "holder_not_live" // /projects/{id}/mcp with the lease of a holder whose process is gone (or a pin)
	CodeLoginExpired   Code = "login_expired"   // a dashboard login link used already, expired, or from another broker
	CodeNoServers      Code = "no_servers"      // the project declares no MCP servers to approve
	CodeUnknownServer  Code = "unknown_server"  // the project declares no server of that name
	CodeNotFailed      Code = "not_failed"      // a restart of a hosted server neither running nor failed
	CodeRestartFailed  Code = "restart_failed"  // a restarted hosted server did not serve again (it failed, waits for approval, or is still starting)
	CodeBadConfig      Code = "bad_config"      // a config file or setting is wrong: the message names the file, line, key and fix
	CodeBodyTimeout    Code = "body_timeout"    // the request body did not arrive within 10 s of its headers
	CodeOtherWriters   Code = "other_writers"   // an approval refused: another account owns or may write what it covers
	CodeCannotRun      Code = "cannot_run"      // an approval refused: the server cannot run as declared (a command that does not exist)
	CodeFolderRefused  Code = "folder_refused"  // a folder Berth does not serve without .praxis-os/ (the home directory, /), or a pin of a folder
)

// Error is an error answer: the HTTP status, its Code and a message that
// names the fix. The broker returns it from its handlers and the Client
// returns it for every non-2xx answer.
type Error struct {
	Status  int
	Code    Code // "" from brokers older than error codes
	Message string
}

func (e *Error) Error() string { return e.Message }

// Is reports whether target is e's Code, so that errors.Is(err, CodeX) works.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c != "" && c == e.Code
}

// Errorf builds an *Error.
func Errorf(status int, code Code, format string, args ...any) error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError is err as an *Error: itself when it is (or wraps) one, else a
// 500 with CodeInternal and err's message.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: err.Error()}
}

// ErrorBody is the JSON body of every error answer.
type ErrorBody struct {
	Error string `json:"error"`
	Code  Code   `json:"code,omitempty"`
}

// ParseError turns an error answer into an *Error; a body that is not an
// ErrorBody keeps its text as the message and has no code.
func ParseError(status int, body []byte) *Error {
	var b ErrorBody
	if json.Unmarshal(body, &b) == nil && b.Error != "" {
		return &Error{Status: status, Code: b.Code, Message: b.Error}
	}
	return &Error{Status: status, Message: fmt.Sprintf("broker answered %d: %s", status, strings.TrimSpace(string(body)))}
}
