package controlapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/berth-dev/berth/api"
)

// FuzzDecodeControlBodies sends arbitrary bytes as the JSON body of the
// control API's POST /projects, POST /shutdown, POST /servers/approve,
// POST /servers/revoke and POST /servers/restart:
// decoding never panics,
// a refusal is a 4xx *api.Error with a code, and an accepted body is exactly one
// object whose fields survive a round trip.
func FuzzDecodeControlBodies(f *testing.F) {
	for _, seed := range []string{
		`{"root":"/p","kind":"shim","pid":12,"version":"0.2.0"}`,
		`{"reason":"upgrade","if_unheld":true,"except_lease":"abc"}`,
		`{"root":1}`, `{"rot":"/p"}`, `{"root":"/p"} {"root":"/q"}`, `[1,2]`, `null`, ``, `{"pid":1e400}`,
		"{\"root\":\"\xff\"}",
		`{"root":"/p","servers":["memory","web-api"]}`, `{"root":"/p","servers":"memory"}`, `{"servers":[null]}`, `{"root":"/p","server":"memory"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var ar api.AttachRequest
		checkDecode(t, body, &ar)
		var sr api.ShutdownRequest
		checkDecode(t, body, &sr)
		var ap api.ApproveRequest
		checkDecode(t, body, &ap)
		var vr api.RevokeRequest
		checkDecode(t, body, &vr)
		var rr api.RestartRequest
		checkDecode(t, body, &rr)
	})
}

func checkDecode[T any](t *testing.T, body []byte, v *T) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/projects", bytes.NewReader(body))
	err := DecodeJSON(httptest.NewRecorder(), r, v)
	if err != nil {
		var e *api.Error
		if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 || e.Message == "" || e.Code == "" {
			t.Fatalf("refusal is not a 4xx *api.Error with a code: %#v", err)
		}
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var again T
	if err := json.Unmarshal(raw, &again); err != nil {
		t.Fatalf("accepted %q, which does not round-trip: %v", body, err)
	}
	if raw2, _ := json.Marshal(again); !bytes.Equal(raw, raw2) {
		t.Fatalf("round trip changed %s into %s", raw, raw2)
	}
}
