// Package storetest opens stores for tests.
package storetest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
)

// Open opens (or creates) the store at path, or at a new file in the
// test's temp dir when path is "", and closes it when the test ends.
func Open(tb testing.TB, path string) *store.DB {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "berth.db")
	}
	db, err := store.Open(path, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
