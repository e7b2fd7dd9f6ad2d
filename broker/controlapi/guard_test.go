package controlapi

import "testing"

func TestLoopbackChecks(t *testing.T) {
	for h, want := range map[string]bool{
		"127.0.0.1:4242": true, "localhost:1": true, "[::1]:80": true, "127.0.0.1": true, "LOCALHOST": true,
		"evil.example": false, "10.0.0.1:80": false, "": false, "127.0.0.1.evil.example:80": false,
	} {
		if got := IsLoopbackHost(h); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v", h, got)
		}
	}
	for o, want := range map[string]bool{"http://127.0.0.1:4241": true, "http://localhost": true, "https://evil.example": false, "null": false, "file://": false} {
		if got := IsLoopbackOrigin(o); got != want {
			t.Errorf("IsLoopbackOrigin(%q) = %v", o, got)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		want         bool
	}{
		{"http://127.0.0.1:4242", "127.0.0.1:4242", true},
		{"http://localhost:4242", "127.0.0.1:4242", true},
		{"http://[::1]:4242", "localhost:4242", true},
		{"http://localhost:3000", "127.0.0.1:4242", false},
		{"http://127.0.0.1", "127.0.0.1:4242", false},
		{"http://127.0.0.1", "127.0.0.1:80", true},
		{"http://evil.example:4242", "127.0.0.1:4242", false},
		{"null", "127.0.0.1:4242", false},
		{"http://127.0.0.1:4242", "127.0.0.1", false},
	} {
		if got := sameOrigin(tc.origin, tc.host); got != tc.want {
			t.Errorf("sameOrigin(%q, %q) = %v", tc.origin, tc.host, got)
		}
	}
}
