package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrCorrupt reports a database file that cannot be used: a bad header,
// a truncated file, or pages that cannot be read.
var ErrCorrupt = errors.New("database file is corrupt")

// openChecked opens path with bbolt after proving, on a read-only open,
// that every reachable page can be read. bbolt maps the file into memory, so
// reading a page past the end of a truncated file is a memory fault, not an
// error: the check runs under guarded, which turns faults into ErrCorrupt.
// A read-only open reads only the two meta pages, so it cannot fault; the
// read-write open that follows loads the freelist, which by then is known
// to lie inside the file.
func openChecked(path string, timeout time.Duration) (*bolt.DB, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		ro, err := OpenReadOnly(path, timeout)
		if err != nil {
			return nil, err
		}
		ro.Close()
	}
	var b *bolt.DB
	err := guarded(func() (err error) {
		b, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, classify(err))
	}
	return b, nil
}

func classify(err error) error {
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return ErrLocked
	case errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
		return err
	default:
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
}

// verify checks that the file holds every page the database uses and
// walks every bucket, touching the end of every value.
func verify(b *bolt.DB, size int64) error {
	return b.View(func(tx *bolt.Tx) error {
		if used := tx.Size(); used > size {
			return fmt.Errorf("%w: truncated (%d bytes, the database uses %d)", ErrCorrupt, size, used)
		}
		var sum byte
		err := tx.ForEach(func(_ []byte, bk *bolt.Bucket) error { return walk(bk, &sum) })
		runtime.KeepAlive(sum) // the reads must happen
		return err
	})
}

func walk(bk *bolt.Bucket, sum *byte) error {
	return bk.ForEach(func(k, v []byte) error {
		if v == nil {
			child := bk.Bucket(k)
			if child == nil {
				return fmt.Errorf("%w: key %q is neither a value nor a bucket", ErrCorrupt, k)
			}
			return walk(child, sum)
		}
		if len(v) > 0 {
			*sum ^= v[len(v)-1]
		}
		return nil
	})
}

// MoveAside renames a corrupt database file to <path>.corrupt-<UTC time>
// and returns the new name. Nothing is deleted.
func MoveAside(path string) (string, error) {
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("move %s aside: %w", path, err)
	}
	return aside, nil
}

// PruneAside removes the oldest <path>.corrupt-* copies MoveAside left,
// keeping the keep newest, and returns the names it removed: each is a
// whole database, and damage that recurs would fill the disk with them.
func PruneAside(path string, keep int) ([]string, error) {
	copies, err := filepath.Glob(path + ".corrupt-*")
	if err != nil {
		return nil, err
	}
	slices.Sort(copies) // the suffix is a UTC time: name order is age order
	var removed []string
	var errs []error
	for _, c := range copies[:max(0, len(copies)-keep)] {
		if err := os.Remove(c); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, c)
	}
	return removed, errors.Join(errs...)
}

// OpenReadOnly opens an existing database for reading only (`berth doctor`
// with no broker running), after the same integrity check as Open. It
// never creates, migrates or writes the file.
func OpenReadOnly(path string, timeout time.Duration) (*DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var b *bolt.DB
	err = guarded(func() (err error) {
		b, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, classify(err))
	}
	if err := guarded(func() error { return verify(b, fi.Size()) }); err != nil {
		b.Close()
		if !errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &DB{bolt: b, path: path}, nil
}

// guarded runs fn with memory faults turned into panics, and a panic (a
// fault on a truncated file, or bbolt's own on a damaged page) into an error.
func guarded(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable: %v", r)
		}
	}()
	return fn()
}
