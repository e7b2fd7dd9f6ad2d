package systest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest/ci"
	"golang.org/x/mod/modfile"
)

// repoRoot is the repository's top folder, from this package's.
const repoRoot = "../../.."

// TestEverythingTrackedIsBerths: go.mod replaces no module (a replace
// keeps `go install ...@version` out), no tracked file is another
// project's licence or notice (only the repository's own, at its top), and
// no tracked file carries a copyright or SPDX line naming anyone but
// Berth's authors: the repository holds code, prose and fixtures written
// for Berth; third-party documents are read from the module cache.
func TestEverythingTrackedIsBerths(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mod.Replace {
		t.Errorf("go.mod:%d replaces %s with %s: depend on a released version instead (go install ...@version refuses a replace)",
			r.Syntax.Start.Line, r.Old.Path, r.New.Path)
	}

	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		ci.Unavailable(t, "git ls-files: %v (run the test in a git checkout with git installed)", err)
	}
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "" {
			continue
		}
		if isLicence(filepath.Base(path)) && strings.Contains(path, "/") {
			t.Errorf("%s: another project's licence or notice; the repository holds only its own (at its top)", path)
		}
		for _, line := range foreignNotices(t, filepath.Join(repoRoot, path)) {
			t.Errorf("%s: %q names someone other than Berth's authors: copied text does not belong in the repository", path, line)
		}
	}
}

// isLicence reports whether a file name is that of a licence or notice.
func isLicence(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE"} {
		if strings.HasPrefix(upper, p) {
			return true
		}
	}
	return false
}

// notice matches a copyright line (the word and a year or (c), or ©) and
// any SPDX tag.
var notice = regexp.MustCompile(`(?i)copyright\s+(\(c\)|©|[0-9]{4})|©\s*[0-9]{4}|SPDX-[A-Za-z-]+:`)

// foreignNotices returns the lines of a text file that are copyright or
// SPDX lines not naming Berth.
func foreignNotices(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // deleted in the work tree, not yet in the index
		}
		t.Fatal(err)
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil // binary
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		if line := sc.Text(); notice.MatchString(line) && !strings.Contains(line, "Berth") {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found
}

// TestNoticeLines: the check above knows a notice from prose. (The
// examples are split so that this file carries none.)
func TestNoticeLines(t *testing.T) {
	t.Parallel()
	const c, spdx = "Copy" + "right", "SP" + "DX-"
	for line, want := range map[string]bool{
		"// " + c + " 2025 The Go MCP SDK Authors. All rights reserved.": true,
		c + " (c) 2016 Segment.io, Inc.":                                 true,
		"©" + " 2024 Someone":                                            true,
		"// " + spdx + "License-Identifier: Apache-2.0":                  true,
		c + " 2026 The Berth Authors":                                    false, // Berth's own
		"the copyright of a document stays with its authors":             false,
		"see the LICENSE file":                                           false,
	} {
		if got := notice.MatchString(line) && !strings.Contains(line, "Berth"); got != want {
			t.Errorf("%q: foreign notice %v, want %v", line, got, want)
		}
	}
	for name, want := range map[string]bool{"LICENSE": true, "LICENCE.md": true, "COPYING": true, "NOTICE.txt": true, "license.txt": true, "licensing.go": false, "README.md": false} {
		if got := isLicence(name); got != want {
			t.Errorf("isLicence(%q) = %v, want %v", name, got, want)
		}
	}
}
