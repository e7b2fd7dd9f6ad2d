package controlapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/berth-dev/berth/api"
)

// BodyTimeout bounds how long a client of the control API may take to
// send a request's body, as on project ports.
const BodyTimeout = 10 * time.Second

// ReadBodies reads each request's body before the routes see it, within
// timeout: a body that does not arrive in time is answered 408
// body_timeout and its connection closed, one over limit bytes 413
// body_too_large. The routes read it from memory, so no handler waits on
// a client that stalls, and an answer that streams (the shim's MCP route)
// is not bounded by the deadline.
func ReadBodies(timeout time.Duration, limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(timeout))
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
			var netErr net.Error
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &netErr) && netErr.Timeout():
				w.Header().Set("Connection", "close")
				WriteError(w, api.Errorf(http.StatusRequestTimeout, api.CodeBodyTimeout,
					"request body not received within %s: send the whole body at once", timeout))
				return
			case errors.As(err, &tooBig):
				WriteError(w, api.Errorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "request body is over %d bytes", limit))
				return
			case err != nil:
				WriteError(w, api.Errorf(http.StatusBadRequest, api.CodeBadRequest, "read request body: %v", err))
				return
			}
			_ = rc.SetReadDeadline(time.Time{})
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			next.ServeHTTP(w, r)
		})
	}
}
