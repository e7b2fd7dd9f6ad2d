package store

import (
	"fmt"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// WriteError is a write transaction berth.db could not commit: the disk
// is full, a file-size limit is reached, the disk failed. Nothing of the
// transaction was written.
type WriteError struct {
	Path string
	Free int64 // bytes free on the file's disk; -1 when unknown
	Err  error
}

func (e *WriteError) Error() string {
	free := ""
	if e.Free >= 0 {
		free = fmt.Sprintf("; %s free on its disk", sizeText(e.Free))
	}
	return fmt.Sprintf("could not write %s (%v%s): free space on the disk that holds it, or fix what the error names", e.Path, e.Err, free)
}

func (e *WriteError) Unwrap() error { return e.Err }

// update runs fn in a read-write transaction. An error of fn is returned
// as it is; a commit the file refused is a *WriteError.
func (db *DB) update(fn func(tx *bolt.Tx) error) error {
	var fnErr error
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		fnErr = fn(tx)
		return fnErr
	})
	if err == nil || fnErr != nil {
		return err
	}
	return &WriteError{Path: db.path, Free: freeBytes(filepath.Dir(db.path)), Err: err}
}

// sizeText is n bytes for people: 512 B, 3.4 MiB.
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[i])
}
