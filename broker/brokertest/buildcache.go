package brokertest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The test processes of one `go test ./...` (the system tests, berth-bench's
// and the workflow package's) run the same berth and berth-shim: the first
// to need them links them into the user's cache directory, under a key of
// the source tree's contents, the Go toolchain and the build's flags; the
// others find them there, or wait on a lock file while it links.

// sharedUnused is how long a shared build may go unused before a test
// process making another removes it: longer than any test run, short
// enough that a day of edits and test runs does not fill the disk (a
// build is about 40 MB).
const sharedUnused = time.Hour

// sharedBuild returns the directory of berth and berth-shim linked with
// args from the source tree at modRoot, linking them first unless a test
// process already did. ok is false when there is no cache directory to
// share them in.
func sharedBuild(modRoot string, args []string) (dir string, ok bool, err error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", false, nil
	}
	base := filepath.Join(cache, "berth", "test-bin")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", false, nil
	}
	key, err := buildKey(modRoot, args)
	if err != nil {
		return "", false, err
	}
	dir = filepath.Join(base, key)
	if use(dir) {
		return dir, true, nil
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", false, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", false, err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	now := time.Now()
	_ = os.Chtimes(lock.Name(), now, now) // in use: not pruned
	if use(dir) {
		return dir, true, nil // linked while this process waited
	}
	prune(base, key)
	tmp, err := os.MkdirTemp(base, key+".tmp-")
	if err != nil {
		return "", false, err
	}
	if err := goBuild(modRoot, tmp, args); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if use(dir) { // another process linked the same tree meanwhile (its lock file was pruned)
			return dir, true, nil
		}
		return "", false, err
	}
	return dir, true, nil
}

// use reports whether the shared build dir exists, and marks it used now.
func use(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "berth-shim")); err != nil {
		return false
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
	return true
}

// prune removes the shared builds (and leftovers of failed ones) that no
// test process used for sharedUnused, but key's.
func prune(base, key string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), key) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > sharedUnused {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// buildKey hashes what the binaries are made of: the toolchain and its
// settings, the build's flags, and every file of the source tree but
// tests, git's and Node's (go.mod, go.sum, the Go files and the files
// they embed among them).
func buildKey(modRoot string, args []string) (string, error) {
	h := sha256.New()
	env, err := exec.Command("go", "env", "GOVERSION", "GOFLAGS", "GOOS", "GOARCH", "CGO_ENABLED", "GOEXPERIMENT", "CC").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	fmt.Fprintf(h, "%s\x00%s\x00", env, strings.Join(args, "\x00"))
	var files []string
	err = filepath.WalkDir(modRoot, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while the walk ran: a test's output
		}
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case d.IsDir() && path != modRoot && (name == ".git" || name == "node_modules" || path == filepath.Join(modRoot, ".ci", "artifacts")):
			return filepath.SkipDir // not built; the last written by tests as they run
		case d.Type().IsRegular() && !strings.HasSuffix(name, "_test.go") && name != ".git":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		rel, _ := filepath.Rel(modRoot, f)
		fh, err := os.Open(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the walk
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}
