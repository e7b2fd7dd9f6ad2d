package broker

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
)

func TestDashboardLoginCodesWorkOnceAndExpire(t *testing.T) {
	l := newLogins("127.0.0.1:4241", false)
	link, err := l.Link()
	if err != nil {
		t.Fatal(err)
	}
	code, ok := strings.CutPrefix(link.URL, "http://127.0.0.1:4241/#login=")
	if !ok || len(code) != 64 || time.Until(link.ExpiresAt) > loginTTL {
		t.Fatalf("link %+v", link)
	}
	s, err := l.Redeem(code)
	if err != nil || len(s.Key) != 64 {
		t.Fatalf("redeem: %+v %v", s, err)
	}
	if _, err := l.Redeem(code); !errors.Is(err, api.CodeLoginExpired) {
		t.Fatalf("a second redeem: %v", err)
	}
	if _, err := l.Redeem(""); !errors.Is(err, api.CodeLoginExpired) {
		t.Fatalf("an empty code: %v", err)
	}
	link, _ = l.Link()
	l.codes[strings.TrimPrefix(link.URL, "http://127.0.0.1:4241/#login=")] = time.Now().Add(-time.Second)
	if _, err := l.Redeem(strings.TrimPrefix(link.URL, "http://127.0.0.1:4241/#login=")); !errors.Is(err, api.CodeLoginExpired) {
		t.Fatalf("an expired code: %v", err)
	}
	if _, err := newLogins("", false).Link(); err == nil || !strings.Contains(err.Error(), "set listen") {
		t.Fatalf("a link with listen off: %v", err)
	}
}

func TestDashboardKeysAdmit(t *testing.T) {
	req := func(method, path, auth string) *http.Request {
		r := httptest.NewRequest(method, path, nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	for _, tokenOnly := range []bool{false, true} {
		l := newLogins("127.0.0.1:4241", tokenOnly)
		var keys []string
		for range maxLoginKeys + 1 {
			link, _ := l.Link()
			s, err := l.Redeem(link.URL[strings.Index(link.URL, "=")+1:])
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, s.Key)
		}
		if !l.admits(req("GET", "/projects", "Bearer "+keys[len(keys)-1])) || !l.admits(req("GET", "/events", "Bearer "+keys[1])) {
			t.Error("a live key was refused")
		}
		if l.admits(req("GET", "/projects", "Bearer "+keys[0])) {
			t.Error("the oldest key outlived the limit")
		}
		for _, r := range []*http.Request{req("GET", "/projects", ""), req("GET", "/projects", "Bearer nope"), req("GET", "/projects", keys[2])} {
			if l.admits(r) {
				t.Errorf("admitted %s %v", r.URL, r.Header)
			}
		}
		for _, r := range []*http.Request{req("GET", "/", ""), req("GET", "/assets/app.js", ""), req("POST", "/dashboard/login", "")} {
			if l.admits(r) != tokenOnly {
				t.Errorf("token only %v: %s %s admitted %v", tokenOnly, r.Method, r.URL, !tokenOnly)
			}
		}
		if l.admits(req("POST", "/projects", "")) || l.admits(req("GET", "/dashboard/link", "")) {
			t.Error("a data route was public")
		}
	}
}
