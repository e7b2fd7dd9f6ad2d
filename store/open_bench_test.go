package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkOpen measures a broker's start-up open of a database holding
// about 64 MiB of index data: the integrity check reads every value.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "berth.db")
	db, err := Open(path, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	val := []byte(strings.Repeat("x", 1000))
	for p := range 16 {
		err := db.Area(fmt.Sprintf("project-%d", p), "index").Update(func(bk *Bucket) error {
			for i := range 4096 {
				if err := bk.Put([]byte(fmt.Sprintf("chunk-%06d", i)), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	b.ResetTimer()
	for b.Loop() {
		db, err := Open(path, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
	b.ReportMetric(float64(db.Size())/(1<<20), "MiB")
}
