package controlapi

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/berth-dev/berth/api"
)

// RefuseForeignOrigin refuses browser requests from pages that are not served
// from a loopback origin (a web page must not drive the local broker).
func RefuseForeignOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !IsLoopbackOrigin(o) {
			WriteError(w, api.Errorf(http.StatusForbidden, api.CodeForbidden, "origin %s is not allowed", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// OwnOriginOnly refuses requests whose Origin is not the listener's own
// (loopback, the same port as the Host): a project port serves programs,
// which send no Origin, and no pages, so only a page of another origin
// (a loopback dev server's included) would send one.
func OwnOriginOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			WriteError(w, api.Errorf(http.StatusForbidden, api.CodeForbidden, "origin %s is not allowed: project ports serve programs, not web pages", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin is a loopback origin on host's port.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || !IsLoopbackOrigin(origin) {
		return false
	}
	_, hp, _ := net.SplitHostPort(host)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return hp != "" && port == hp
}

// LoopbackHostOnly refuses requests whose Host header is not a loopback name
// (DNS rebinding protection).
func LoopbackHostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsLoopbackHost(r.Host) {
			WriteError(w, api.Errorf(http.StatusForbidden, api.CodeForbidden, "host %q is not allowed: use 127.0.0.1 or localhost", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// IsLoopbackHost reports whether a Host header names a loopback address.
func IsLoopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackOrigin reports whether an Origin header is a loopback http(s) origin.
func IsLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return IsLoopbackHost(u.Host)
}

// HasBearer reports whether r carries want ("Bearer <token>") as its
// Authorization header, in constant time; an empty want matches nothing.
func HasBearer(r *http.Request, want []byte) bool {
	return len(want) > 0 && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1
}
