package api

import "testing"

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		cmp  int
		ok   bool
	}{
		{"0.1.0", "0.1.0", 0, true},
		{"0.1.0", "0.2.0", -1, true},
		{"1.0.0", "0.9.9", 1, true},
		{"v1.2.3", "1.2.3", 0, true},
		{"0.1.0-dev", "0.1.0", -1, true},
		{"0.1.0", "0.1.0-dev", 1, true},
		{"0.1.0-alpha", "0.1.0-beta", -1, true},
		{"0.2.0-dev", "0.1.9", 1, true},
		{"1.2", "1.2.0", 0, true},
		{"1.2.3+build.5", "1.2.3", 0, true},
		{"1.10.0", "1.9.0", 1, true},
		{"", "1.0.0", 0, false},
		{"1.x.0", "1.0.0", 0, false},
		{"1.0.0.0", "1.0.0", 0, false},
		{"1.0.0-", "1.0.0", 0, false},
		{"01.0.0", "1.0.0", 0, false},
	} {
		cmp, ok := CompareVersions(tc.a, tc.b)
		if cmp != tc.cmp || ok != tc.ok {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", tc.a, tc.b, cmp, ok, tc.cmp, tc.ok)
		}
	}
}

func FuzzCompareVersions(f *testing.F) {
	for _, s := range []string{"0.1.0-dev", "1.2.3", "v2", "1.0.0+x", "x"} {
		f.Add(s, "0.1.0")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, okA := CompareVersions(a, b)
		ba, okB := CompareVersions(b, a)
		if okA != okB || ab != -ba {
			t.Fatalf("not antisymmetric: %q vs %q = %d,%v; reverse %d,%v", a, b, ab, okA, ba, okB)
		}
		if aa, ok := CompareVersions(a, a); ok && aa != 0 {
			t.Fatalf("%q differs from itself", a)
		}
	})
}
