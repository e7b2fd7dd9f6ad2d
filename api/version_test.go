package api

import (
	"runtime/debug"
	"testing"
)

// TestCommitOfEachKindOfBuild: the commit comes from the VCS stamp of a
// checkout build, else from a pseudo-version; a release version or
// "(devel)" without a stamp has none.
func TestCommitOfEachKindOfBuild(t *testing.T) {
	stamped := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		bi      *debug.BuildInfo
		version string
		want    string
	}{
		{stamped, "(devel)", "0123456789ab-dirty"},
		{&debug.BuildInfo{}, "v0.0.0-20261126061500-abcdef012345", "abcdef012345"},
		{&debug.BuildInfo{}, "v1.3.1-0.20261126061500-abcdef012345", "abcdef012345"},
		{&debug.BuildInfo{}, "v1.3.0", "unknown"},
		{&debug.BuildInfo{}, "(devel)", "unknown"},
		{nil, "v1.3.0-rc.1", "unknown"},
	} {
		if got := commitOf(tc.bi, tc.bi != nil, tc.version); got != tc.want {
			t.Errorf("commitOf(%v, %q) = %q, want %q", tc.bi, tc.version, got, tc.want)
		}
	}
}

func TestParseProtocol(t *testing.T) {
	for s, want := range map[string]int{"2": 2, "10": 10, "": 0, "x": 0, "-1": 0, "1.0": 0} {
		if got := ParseProtocol(s); got != want {
			t.Errorf("ParseProtocol(%q) = %d, want %d", s, got, want)
		}
	}
	if Protocol() < 2 {
		t.Errorf("Protocol() = %d", Protocol())
	}
}
