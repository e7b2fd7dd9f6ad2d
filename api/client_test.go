package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestClientSaysAnAnswerIsTooLarge: an answer past what the client reads
// is an error that says so (and how to ask for less), never a JSON decode
// error of the cut answer; an answer within it decodes.
func TestClientSaysAnAnswerIsTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		size := maxAnswer + 1
		if r.URL.Query().Get("root") == "small" {
			size = 1 << 20
		}
		body := `{"projects": [{"id": "` + strings.Repeat("x", size-len(`{"projects": [{"id": ""}]}`)) + `"}]}`
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c := NewTCPClient(strings.TrimPrefix(srv.URL, "http://"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Servers(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") || strings.Contains(err.Error(), "decode") {
		t.Fatalf("a 16 MiB + 1 answer: %v", err)
	}
	list, err := c.Servers(ctx, "small")
	if err != nil || len(list.Projects) != 1 || len(list.Projects[0].ID) < 1<<19 {
		t.Fatalf("a 1 MiB answer: %v", err)
	}
}
