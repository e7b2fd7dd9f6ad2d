package systest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// TestGoInstallAtAVersion runs exactly the README's install commands,
// `go install github.com/berth-dev/berth/cmd/berth@VERSION` and
// `.../cmd/berth-shim@VERSION`, against a module proxy directory made from
// this tree's last commit (GOPROXY protocol: @v/list, .info, .mod, .zip),
// then runs the installed binaries. A go.mod with a replace, a file the
// module zip refuses or a dependency that does not resolve fails it. The
// other modules come from the module cache, else the machine's proxy. The
// version is new on each run, and its files leave the module cache after.
// It builds both binaries (a minute or more), so it runs only with
// BERTH_TEST_GO_INSTALL=1: .ci/run runs it in a step of its own, after the
// suite, so that the suite's packages keep their time.
func TestGoInstallAtAVersion(t *testing.T) {
	if os.Getenv("BERTH_TEST_GO_INSTALL") == "" {
		t.Skip("set BERTH_TEST_GO_INSTALL=1 (.ci/run does, in its go install step): builds Berth from a module proxy, a minute or two")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	goEnv := func(name string) string {
		out, err := exec.CommandContext(ctx, "go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	const modPath = "github.com/berth-dev/berth"
	installVersion := fmt.Sprintf("v0.99.0-install.%d", time.Now().UnixNano())
	mv := module.Version{Path: modPath, Version: installVersion}

	// The proxy directory, as the GOPROXY protocol lays it out.
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	escaped, err := module.EscapePath(modPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The tree of the last commit (git archive), zipped as the go command
	// wants it (golang.org/x/mod/zip checks names, sizes and submodules).
	src := filepath.Join(tmp, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar HEAD | tar -x -C "$2"`, "sh", root, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive HEAD: %v: %s", err, out)
	}
	var zipBuf bytes.Buffer
	if err := modzip.CreateFromDir(&zipBuf, mv, src); err != nil {
		t.Fatalf("make the module zip of HEAD: %v", err)
	}
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": installVersion, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{
		"list":                   []byte(installVersion + "\n"),
		installVersion + ".info": info,
		installVersion + ".mod":  gomod,
		installVersion + ".zip":  zipBuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	gobin := filepath.Join(tmp, "bin")
	goproxy := "file://" + proxy
	if p := goEnv("GOPROXY"); p != "" && p != "off" {
		goproxy += "," + p
	}
	env := append(os.Environ(),
		"GOPROXY="+goproxy, "GONOSUMDB="+modPath, "GOFLAGS=", "GOBIN="+gobin, "GOWORK=off")
	modCache := goEnv("GOMODCACHE")
	t.Cleanup(func() { forgetModule(t, modCache, escaped, installVersion) })
	for _, cmd := range []string{"berth", "berth-shim"} {
		c := exec.CommandContext(ctx, "go", "install", modPath+"/cmd/"+cmd+"@"+installVersion)
		c.Env, c.Dir = env, tmp // outside the checkout: no main module
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, out)
		}
	}
	for _, run := range [][]string{{"berth", "version"}, {"berth", "--help"}, {"berth-shim", "--help"}} {
		c := exec.CommandContext(ctx, filepath.Join(gobin, run[0]), run[1:]...)
		c.Env = append(os.Environ(), "BERTH_HOME="+filepath.Join(tmp, "home"))
		out, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(out), run[0]) {
			t.Fatalf("the installed %s: %v\n%s", strings.Join(run, " "), err, out)
		}
	}
}

// forgetModule removes one version of a module from the module cache: its
// extracted tree (read-only, as the go command leaves it) and its
// downloaded files.
func forgetModule(t *testing.T, modCache, escapedPath, version string) {
	tree := filepath.Join(modCache, filepath.FromSlash(escapedPath)+"@"+version)
	_ = filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o755)
		}
		return nil
	})
	if err := os.RemoveAll(tree); err != nil {
		t.Logf("remove %s: %v", tree, err)
	}
	files, _ := filepath.Glob(filepath.Join(modCache, "cache", "download", filepath.FromSlash(escapedPath), "@v", version+".*"))
	for _, f := range files {
		_ = os.Remove(f)
	}
	// The proxy's version list, and the folders, once no other run's
	// version is there (Remove leaves a folder that is not empty).
	dl := filepath.Join(modCache, "cache", "download", filepath.FromSlash(escapedPath), "@v")
	if rest, _ := filepath.Glob(filepath.Join(dl, "v*")); len(rest) == 0 {
		_ = os.Remove(filepath.Join(dl, "list"))
	}
	for _, dir := range []string{dl, filepath.Dir(dl), filepath.Dir(filepath.Dir(dl)), filepath.Dir(tree)} {
		_ = os.Remove(dir)
	}
}
