package controlapi

import (
	"mime"
	"net/http"
	"strings"

	"github.com/berth-dev/berth/api"
)

// RefuseBrowserRequests refuses the mutating requests a web page could
// have sent: a page of any origin, a loopback one included (a local dev
// server running a compromised dependency), can send a POST with a form or
// text body, or open a WebSocket, without the CORS preflight that Berth
// never grants. Such a request is one with an Origin header, or a POST
// whose content type is a CORS-simple one (none, text/plain, a form). It is
// admitted only with the api.ClientHeader or the bearer token (want is
// "Bearer <token>"; nil for none): a page of another origin cannot send
// either without a preflight. Programs (the CLI, the shim, sub-agents) send
// JSON and no Origin, so they pass; the dashboard sends the header.
//
// Mutating requests are every method but GET and HEAD, and every request
// on the shim's route /projects/{id}/mcp (its WebSocket upgrade is a GET).
//
// net/http's CrossOriginProtection is not enough here: it admits any
// request without Origin and Sec-Fetch-Site, and never checks GET, so it
// would pass a form or text POST with no Origin and a WebSocket upgrade to
// the shim's route.
func RefuseBrowserRequests(token []byte) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if mutating(r) && browserStyle(r) && r.Header.Get(api.ClientHeader) == "" && !HasBearer(r, token) {
				WriteError(w, api.Errorf(http.StatusForbidden, api.CodeBrowserRequest,
					"%s %s looks like a web page's request (%s): a program sends JSON without an Origin header, or the %s header",
					r.Method, r.URL.Path, browserSign(r), api.ClientHeader))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func mutating(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return true
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/projects/")
	return ok && strings.HasSuffix(rest, "/mcp")
}

// browserStyle: an Origin (browsers send it with every POST, DELETE and
// WebSocket upgrade) or a body type a form or a no-cors fetch can send.
func browserStyle(r *http.Request) bool {
	if r.Header.Get("Origin") != "" {
		return true
	}
	return r.Method == http.MethodPost && simpleContentType(r.Header.Get("Content-Type"))
}

// simpleContentType reports a content type a page may send cross-origin
// without a preflight; none counts (a fetch of a Blob without a type).
func simpleContentType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return true // browsers send what they are given: unparsable is not JSON
	}
	switch mt {
	case "text/plain", "application/x-www-form-urlencoded", "multipart/form-data":
		return true
	}
	return false
}

// browserSign says what made r look like a browser's.
func browserSign(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		return "it has the Origin " + o
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		return "its body is " + ct
	}
	return "its body has no content type"
}
