package service

import "testing"

func TestSystemdQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/berth":          "/usr/bin/berth",
		"/home/a b/berth":         `"/home/a b/berth"`,
		`/x/"q"\`:                 `"/x/\"q\"\\"`,
		"/home/100%/berth":        "/home/100%%/berth",
		"BERTH_HOME=/a dir/state": `"BERTH_HOME=/a dir/state"`,
	} {
		if got := systemdQuote(in, false); got != want {
			t.Errorf("systemdQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
