package api

import (
	"strconv"
	"strings"
)

// VersionHeader is the response header that carries the broker's version.
const VersionHeader = "Berth-Version"

// CompareVersions orders two semver-like versions ("1.2.3", "v0.1.0-dev"):
// -1 if a is older than b, 0 if equal, +1 if newer. A pre-release
// ("-dev", "-rc.1") sorts before its release; build metadata ("+...") is
// ignored. ok is false when either version cannot be parsed, and then the
// two are not ordered.
func CompareVersions(a, b string) (cmp int, ok bool) {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	if !okA || !okB {
		return 0, false
	}
	for i := range 3 {
		if va.nums[i] != vb.nums[i] {
			if va.nums[i] < vb.nums[i] {
				return -1, true
			}
			return 1, true
		}
	}
	switch {
	case va.pre == vb.pre:
		return 0, true
	case va.pre == "":
		return 1, true
	case vb.pre == "":
		return -1, true
	case va.pre < vb.pre:
		return -1, true
	default:
		return 1, true
	}
}

type version struct {
	nums [3]int
	pre  string
}

func parseVersion(s string) (version, bool) {
	var v version
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		s, v.pre = s[:i], s[i+1:]
		if v.pre == "" {
			return v, false
		}
	}
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (len(p) > 1 && p[0] == '0') {
			return v, false
		}
		v.nums[i] = n
	}
	return v, true
}
