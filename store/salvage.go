package store

import (
	"fmt"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SalvageReport says what Salvage copied out of a corrupt database and what
// it could not read.
type SalvageReport struct {
	Copied int      // values copied (registry records, workflow sessions and their indexes, server approvals)
	Lost   []string // what could not be read, by name
}

// Salvage copies what can still be read from the corrupt database at from
// into db: the project registry, every project's workflow state and its
// approvals of hosted servers. Search
// indexes are derived and are not copied (projects index again on mount).
// What cannot be read is named in the report, never silently dropped.
func Salvage(from string, db *DB) SalvageReport {
	var rep SalvageReport
	src, err := openRaw(from)
	if err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("everything in %s (registry and workflow sessions): %v", from, err))
		return rep
	}
	defer src.Close()
	err = db.bolt.Update(func(dtx *bolt.Tx) error {
		return guarded(func() error {
			return src.View(func(stx *bolt.Tx) error {
				rep.copyBucket(stx, dtx, "registry", [][]byte{bucketRegistry})
				var projects [][]byte
				if err := guarded(func() error {
					data := stx.Bucket(bucketData)
					if data == nil {
						return nil
					}
					return data.ForEach(func(k, v []byte) error {
						if v == nil {
							projects = append(projects, append([]byte(nil), k...))
						}
						return nil
					})
				}); err != nil {
					rep.Lost = append(rep.Lost, fmt.Sprintf("the list of projects with workflow state: %v", err))
				}
				for _, p := range projects {
					rep.copyBucket(stx, dtx, fmt.Sprintf("workflow state of project %s", p), [][]byte{bucketData, p, []byte("workflow")})
					rep.copyBucket(stx, dtx, fmt.Sprintf("server approvals of project %s", p), [][]byte{bucketData, p, []byte("servers")})
				}
				return nil
			})
		})
	})
	if err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("salvage from %s: %v", from, err))
	}
	return rep
}

// copyBucket copies the bucket at path (and its sub-buckets) from stx to
// dtx; a bucket that cannot be read is reported under name.
func (rep *SalvageReport) copyBucket(stx, dtx *bolt.Tx, name string, path [][]byte) {
	err := guarded(func() error {
		src := stx.Bucket(path[0])
		for _, p := range path[1:] {
			if src == nil {
				break
			}
			src = src.Bucket(p)
		}
		if src == nil {
			return nil
		}
		dst, err := dtx.CreateBucketIfNotExists(path[0])
		if err != nil {
			return err
		}
		for _, p := range path[1:] {
			if dst, err = dst.CreateBucketIfNotExists(p); err != nil {
				return err
			}
		}
		return rep.copyInto(src, dst)
	})
	if err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("%s: %v", name, err))
	}
}

func (rep *SalvageReport) copyInto(src, dst *bolt.Bucket) error {
	return src.ForEach(func(k, v []byte) error {
		if v == nil {
			child := src.Bucket(k)
			if child == nil {
				return fmt.Errorf("key %q is neither a value nor a bucket", k)
			}
			d, err := dst.CreateBucketIfNotExists(k)
			if err != nil {
				return err
			}
			return rep.copyInto(child, d)
		}
		if err := dst.Put(append([]byte(nil), k...), append([]byte(nil), v...)); err != nil {
			return err
		}
		rep.Copied++
		return nil
	})
}

// openRaw opens a damaged file read-only, without the integrity walk.
func openRaw(path string) (b *bolt.DB, err error) {
	err = guarded(func() error {
		var oerr error
		b, oerr = bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		return oerr
	})
	return b, err
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
