package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/cmd/berth/internal/ideconfig"
	"github.com/berth-dev/berth/cmd/berth/internal/service"
	"github.com/google/go-cmp/cmp"
)

var updateDeploy = flag.Bool("update", false, "rewrite the examples in deploy/")

// The files in deploy/ are what `berth service install` writes (for a berth
// installed by `go install`, or in /usr/local/bin for launchd), the unit
// the .deb and .rpm install (.goreleaser.yaml), and what `berth
// ide-config APP` prints for berth-shim in /usr/local/bin.
func TestDeployExamplesMatchWhatBerthWrites(t *testing.T) {
	want := map[string][]byte{
		"systemd/berth.service":          service.SystemdUnit(service.Spec{Berth: "%h/go/bin/berth", Home: "%h/.local/state/berth", Specifiers: true}),
		"systemd/berth-package.service":  service.SystemdUnit(service.Spec{Berth: "/usr/bin/berth", Home: "%h/.local/state/berth", Specifiers: true, Packaged: true}),
		"launchd/dev.berth.broker.plist": service.LaunchdPlist(service.Spec{Berth: "/usr/local/bin/berth"}),
		"ide/cursor-mcp.json":            ideSnippet(t, "cursor", ""),
		"ide/claude-desktop.json":        ideSnippet(t, "claude", "/path/to/my-project"),
		"ide/vscode-mcp.json":            ideSnippet(t, "vscode", "/path/to/my-project"),
		"ide/windsurf-mcp_config.json":   ideSnippet(t, "windsurf", "/path/to/my-project"),
		"ide/claude-code-claude.json":    ideSnippet(t, "claude-code", "/path/to/my-project"),
		"ide/gemini-settings.json":       ideSnippet(t, "gemini", "/path/to/my-project"),
		"ide/codex-config.toml":          ideSnippet(t, "codex", "/path/to/my-project"),
		"ide/zed-settings.json":          ideSnippet(t, "zed", "/path/to/my-project"),
		"ide/cline_mcp_settings.json":    ideSnippet(t, "cline", "/path/to/my-project"),
		"ide/goose-config.yaml":          ideSnippet(t, "goose", "/path/to/my-project"),
		"ide/opencode.json":              ideSnippet(t, "opencode", "/path/to/my-project"),
	}
	for rel, body := range want {
		path := filepath.Join("..", "..", "deploy", filepath.FromSlash(rel))
		if *updateDeploy {
			if err := os.WriteFile(path, body, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(body), string(got)); diff != "" {
			t.Errorf("%s differs from what berth writes (go test ./cmd/berth -run DeployExamples -update; -want +got):\n%s", path, diff)
		}
	}
}

func ideSnippet(t *testing.T, name, project string) []byte {
	t.Helper()
	app, err := ideconfig.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ideconfig.NewPlan(app, ideconfig.Options{Project: project, Shim: []string{"/usr/local/bin/berth-shim"}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.Snippet()
	if err != nil {
		t.Fatal(err)
	}
	return body
}
