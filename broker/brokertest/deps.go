package brokertest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Dep is a package a program links.
type Dep struct {
	Path     string
	Standard bool // part of the standard library
}

// Deps lists the packages pkg links when built for goos, pkg itself
// included (`go list -deps`, as tailscale's tstest/deptest does).
func Deps(tb testing.TB, pkg, goos string) []Dep {
	tb.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", pkg)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		tb.Fatalf("go list -deps %s (GOOS=%s): %v\n%s", pkg, goos, err, stderr)
	}
	var deps []Dep
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		deps = append(deps, Dep{Path: path, Standard: std == "true"})
	}
	return deps
}

// Within reports whether pkg is one of roots or a package below one.
func Within(pkg string, roots ...string) bool {
	for _, r := range roots {
		if pkg == r || strings.HasPrefix(pkg, r+"/") {
			return true
		}
	}
	return false
}
