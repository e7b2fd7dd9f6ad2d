package api

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// VersionHeader is the response header that carries the broker's version.
const VersionHeader = "Berth-Version"

// Version is Berth's version, reported by /health and `berth version`: a
// release build sets it (-ldflags -X); otherwise it is the module's
// version from the build information: v1.2.3 for `go install ...@v1.2.3`,
// a pseudo-version for a commit, "(devel)" for a build from a checkout.
var Version = ""

// Commit is the commit Berth was built from: a release build sets it;
// otherwise it comes from the build information (vcs.revision, or the
// pseudo-version's commit), or is "unknown".
var Commit = ""

// ProtocolVersion is the version of the contract between berth-shim (or
// the berth CLI) and the broker: the control API's requests and answers,
// the state file, the attach lease. It is raised whenever a newer shim
// needs a newer broker. Programs decide compatibility by it alone, never
// by Version (which may be "(devel)" or a pseudo-version). A string, so
// that a test build can set it with -ldflags -X.
var ProtocolVersion = "3"

// TestBuildFile, next to a binary built with the tag berthtest, sets the
// Version and ProtocolVersion that binary reports, as -ldflags -X sets
// them in a release build: lines "version=V" and "protocol=P", each
// optional. The system tests copy one build into a folder per version
// they need instead of linking the binaries again for each.
const TestBuildFile = "berthtest-build"

func init() {
	applyTestBuild()
	bi, ok := debug.ReadBuildInfo()
	if Version == "" {
		Version = "(devel)"
		if ok && bi.Main.Version != "" {
			Version = bi.Main.Version
		}
	}
	if Commit == "" {
		Commit = commitOf(bi, ok, Version)
	}
}

// commitOf is the commit of a build: its vcs.revision (with "-dirty" for
// uncommitted changes), else the commit a pseudo-version names.
func commitOf(bi *debug.BuildInfo, ok bool, version string) string {
	if ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			rev = rev[:min(len(rev), 12)]
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	// A pseudo-version: vX.Y.Z-[pre.]yyyymmddhhmmss-abcdefabcdef
	if i := strings.LastIndexByte(version, '-'); i > 0 && len(version)-i-1 == 12 {
		if _, err := strconv.ParseUint(version[i+1:], 16, 64); err == nil {
			return version[i+1:]
		}
	}
	return "unknown"
}

// Protocol is ProtocolVersion as a number (0 when it is not one).
func Protocol() int { return ParseProtocol(ProtocolVersion) }

// ParseProtocol reads a protocol version; anything but a positive number
// is 0, the protocol of brokers from before it was reported.
func ParseProtocol(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
