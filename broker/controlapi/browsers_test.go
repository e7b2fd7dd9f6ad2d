package controlapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/berth-dev/berth/api"
)

func TestRefuseBrowserRequests(t *testing.T) {
	token := []byte("Bearer tok-0123456789abcdef")
	h := RefuseBrowserRequests(token)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	const page = "http://localhost:3000"
	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		refused            bool
	}{
		{"a program's JSON attach", "POST", "/projects", map[string]string{"Content-Type": "application/json"}, false},
		{"JSON with a charset", "POST", "/projects", map[string]string{"Content-Type": "application/json; charset=utf-8"}, false},
		{"a page's text attach", "POST", "/projects", map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": page}, true},
		{"text without an Origin", "POST", "/projects", map[string]string{"Content-Type": "text/plain"}, true},
		{"a form", "POST", "/projects", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, true},
		{"a multipart form", "POST", "/projects", map[string]string{"Content-Type": "multipart/form-data; boundary=b"}, true},
		{"no content type", "POST", "/projects", nil, true},
		{"an unparsable content type", "POST", "/projects", map[string]string{"Content-Type": "text/plain; x"}, true},
		{"JSON with an Origin", "POST", "/projects", map[string]string{"Content-Type": "application/json", "Origin": page}, true},
		{"the dashboard's header", "POST", "/projects", map[string]string{"Content-Type": "application/json", "Origin": page, api.ClientHeader: "dashboard"}, false},
		{"text with the header", "POST", "/projects", map[string]string{"Content-Type": "text/plain", api.ClientHeader: "x"}, false},
		{"text with the token", "POST", "/projects", map[string]string{"Content-Type": "text/plain", "Authorization": string(token)}, false},
		{"text with a wrong token", "POST", "/projects", map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer nope"}, true},
		{"a DELETE with an Origin", "DELETE", "/projects/p-1", map[string]string{"Origin": page}, true},
		{"a program's DELETE", "DELETE", "/projects/p-1", nil, false},
		{"a WebSocket to the shim's route from a page", "GET", "/projects/p-1/mcp", map[string]string{"Origin": page, "Upgrade": "websocket"}, true},
		{"the shim's WebSocket", "GET", "/projects/p-1/mcp", map[string]string{"Upgrade": "websocket"}, false},
		{"a page reading the list", "GET", "/projects", map[string]string{"Origin": page}, false},
		{"a page's search", "GET", "/projects/p-1/search", map[string]string{"Origin": page}, false},
		{"a preflight", "OPTIONS", "/projects", map[string]string{"Origin": page}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(`{"root":"/tmp/x"}`))
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if !tc.refused {
				if w.Code != http.StatusNoContent {
					t.Fatalf("refused: %d %s", w.Code, w.Body)
				}
				return
			}
			var e api.ErrorBody
			if w.Code != http.StatusForbidden || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Code != api.CodeBrowserRequest || !strings.Contains(e.Error, api.ClientHeader) {
				t.Fatalf("got %d %s, want 403 %s naming %s", w.Code, w.Body, api.CodeBrowserRequest, api.ClientHeader)
			}
		})
	}
}
