package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestACommitTheFileRefusesIsAWriteError lowers this process's file-size
// limit to the database's size for one write, so that the file cannot
// grow, as on a full disk: the write fails with a *WriteError naming the
// file and the room left on its disk, nothing of it lands, and the
// database takes writes again once there is room. An error of the
// transaction's own function is returned as it is.
func TestACommitTheFileRefusesIsAWriteError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "berth.db")
	db, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	area := db.Area("shop-1", "index")
	big := func(b *Bucket) error { return b.Put([]byte("big"), make([]byte, 4<<20)) }

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	limit := syscall.Rlimit{Cur: uint64(fi.Size()), Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	err = area.Update(big)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	var we *WriteError
	if !errors.As(err, &we) || we.Path != path || we.Free <= 0 || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "free on its disk") {
		t.Fatalf("a write past the file-size limit: %v (%#v), want a *WriteError naming %s and the room left", err, we, path)
	}
	area.View(func(b *Bucket) error {
		if b.Get([]byte("big")) != nil {
			t.Error("the refused write landed")
		}
		return nil
	})
	if err := area.Update(big); err != nil {
		t.Fatalf("the same write once there is room: %v", err)
	}
	own := errors.New("the function's own error")
	if err := area.Update(func(*Bucket) error { return own }); err != own {
		t.Fatalf("the function's own error came back as %v", err)
	}
}
