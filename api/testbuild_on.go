//go:build berthtest

package api

import (
	"os"
	"path/filepath"
	"strings"
)

// applyTestBuild sets Version and ProtocolVersion from the TestBuildFile
// next to the executable, when there is one.
func applyTestBuild() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(exe), TestBuildFile))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(raw), "\n") {
		switch k, v, _ := strings.Cut(line, "="); k {
		case "version":
			Version = v
		case "protocol":
			ProtocolVersion = v
		}
	}
}
