package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// saveErrChildEnv tells the test binary it runs as the child of
// TestSaveErrorClearedByALaterSave.
const saveErrChildEnv = "BERTH_TEST_SAVE_ERROR_CHILD"

// TestSaveErrorClearedByALaterSave lowers a process's file-size limit
// to the database's size while a change is applied, as on a full disk: the
// save fails, the change is served from memory and Status names the
// error. Once there is room, the next change saves the whole index, and
// the error is cleared; the first change survives a reopen.
//
// The limit is the whole process's: the test runs in a child of its own
// (this test binary, told by saveErrChildEnv), so that no other test's
// file and not the go command's test log meet the lowered limit.
func TestSaveErrorClearedByALaterSave(t *testing.T) {
	if os.Getenv(saveErrChildEnv) != "1" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSaveErrorClearedByALaterSave$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), saveErrChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestSaveErrorClearedByALaterSave") {
			t.Fatalf("the test's child process: %v\n%s", err, out)
		}
		return
	}
	root := t.TempDir()
	writeFiles(t, root, baseCorpus)
	dir := t.TempDir()
	dbPath := dir + "/berth.db"
	db := openDBAt(t, dbPath)
	ix := openReady(t, db, "p", root)
	ctx := context.Background()
	before := ix.Status().Files

	var added []string
	for i := range 200 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Survey %d\n\nQuokka habitat survey notes.\n", i)
		for j := range 100 {
			fmt.Fprintf(&b, "\n## Site %d\n\nword%dx%d burrow%dy%d colony%dz%d\n", j, i, j, i, j, i, j)
		}
		rel := fmt.Sprintf(".praxis-os/standards/survey-%03d.md", i)
		writeFiles(t, root, map[string]string{rel: b.String()})
		added = append(added, rel)
	}
	fi, err := os.Stat(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(fi.Size()), Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	err = ix.Apply(ctx, added)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("applying a change the database has no room for succeeded")
	}
	if got := ix.Status().LastError; !strings.Contains(got, "store index") || !strings.Contains(got, dbPath) {
		t.Fatalf("after the failed save, LastError = %q, want the save's error naming %s", got, dbPath)
	}
	if got := ix.Status().Files; got != before+len(added) {
		t.Fatalf("after the failed save the index serves %d files, want %d", got, before+len(added))
	}

	writeFiles(t, root, map[string]string{".praxis-os/standards/small.md": "# Small\n\nWombat burrows.\n"})
	if err := ix.Apply(ctx, []string{".praxis-os/standards/small.md"}); err != nil {
		t.Fatalf("a change once there is room: %v", err)
	}
	if got := ix.Status().LastError; got != "" {
		t.Fatalf("after a later successful save, LastError = %q, want it cleared", got)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	again := openReady(t, db, "p", root)
	if got := again.Status().FilesRead; got != 0 {
		t.Errorf("the reopened index read %d files, want 0: the full save did not hold the failed change", got)
	}
	if got := again.Status().Files; got != before+len(added)+1 {
		t.Errorf("the reopened index holds %d files, want %d", got, before+len(added)+1)
	}
}
