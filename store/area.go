package store

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Area is one project's slice of one subsystem: the bucket data/<project>/<name>.
type Area struct {
	db        *DB
	projectID string
	name      string
}

// Area returns the handle for data/<projectID>/<name>. Nothing is created
// until the first [Area.Update].
func (db *DB) Area(projectID, name string) *Area {
	return &Area{db: db, projectID: projectID, name: name}
}

// View runs fn in a read-only transaction. If the area does not exist yet, fn
// sees an empty bucket.
func (a *Area) View(fn func(b *Bucket) error) error {
	return a.db.bolt.View(func(tx *bolt.Tx) error {
		return fn(&Bucket{b: a.lookup(tx)})
	})
}

// Update runs fn in a read-write transaction, creating the area if needed.
// Either all of fn's writes land or none do.
func (a *Area) Update(fn func(b *Bucket) error) error {
	return a.db.update(func(tx *bolt.Tx) error {
		data, err := tx.CreateBucketIfNotExists(bucketData)
		if err != nil {
			return err
		}
		proj, err := data.CreateBucketIfNotExists([]byte(a.projectID))
		if err != nil {
			return fmt.Errorf("create project bucket %s: %w", a.projectID, err)
		}
		area, err := proj.CreateBucketIfNotExists([]byte(a.name))
		if err != nil {
			return fmt.Errorf("create area %s/%s: %w", a.projectID, a.name, err)
		}
		return fn(&Bucket{b: area})
	})
}

// Drop deletes the area and everything in it. Dropping a missing area is not an error.
func (a *Area) Drop() error {
	return a.db.update(func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketData)
		if data == nil {
			return nil
		}
		proj := data.Bucket([]byte(a.projectID))
		if proj == nil {
			return nil
		}
		err := proj.DeleteBucket([]byte(a.name))
		if errors.Is(err, errBucketNotFound) {
			return nil
		}
		return err
	})
}

// DropAreas deletes the area name of every project and returns how many
// projects had one.
func (db *DB) DropAreas(name string) (int, error) {
	n := 0
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketData)
		if data == nil {
			return nil
		}
		var projects [][]byte
		if err := data.ForEach(func(k, v []byte) error {
			if v == nil {
				projects = append(projects, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, p := range projects {
			err := data.Bucket(p).DeleteBucket([]byte(name))
			switch {
			case err == nil:
				n++
			case !errors.Is(err, errBucketNotFound):
				return err
			}
		}
		return nil
	})
	return n, err
}

func (a *Area) lookup(tx *bolt.Tx) *bolt.Bucket {
	data := tx.Bucket(bucketData)
	if data == nil {
		return nil
	}
	proj := data.Bucket([]byte(a.projectID))
	if proj == nil {
		return nil
	}
	return proj.Bucket([]byte(a.name))
}

// Bucket is a bucket inside a transaction. A Bucket for a missing bucket is
// valid and empty: reads find nothing and writes fail.
type Bucket struct {
	b *bolt.Bucket
}

var errReadOnly = errors.New("bucket does not exist in this read-only view")

// Exists reports whether the bucket exists.
func (b *Bucket) Exists() bool { return b.b != nil }

// Get returns a copy of the value at key, or nil.
func (b *Bucket) Get(key []byte) []byte {
	if b.b == nil {
		return nil
	}
	v := b.b.Get(key)
	if v == nil {
		return nil
	}
	return bytes.Clone(v)
}

// Put stores value at key.
func (b *Bucket) Put(key, value []byte) error {
	if b.b == nil {
		return errReadOnly
	}
	return b.b.Put(key, value)
}

// Delete removes key; a missing key is not an error.
func (b *Bucket) Delete(key []byte) error {
	if b.b == nil {
		return errReadOnly
	}
	return b.b.Delete(key)
}

// ForEach calls fn for every key/value in key order; nested buckets have a nil
// value. k and v are only valid during the call.
func (b *Bucket) ForEach(fn func(k, v []byte) error) error {
	if b.b == nil {
		return nil
	}
	return b.b.ForEach(fn)
}

// Bucket returns the nested bucket name; it is empty if missing.
func (b *Bucket) Bucket(name string) *Bucket {
	if b.b == nil {
		return &Bucket{}
	}
	return &Bucket{b: b.b.Bucket([]byte(name))}
}

// CreateBucket returns the nested bucket name, creating it if needed.
func (b *Bucket) CreateBucket(name string) (*Bucket, error) {
	if b.b == nil {
		return nil, errReadOnly
	}
	nb, err := b.b.CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("create bucket %s: %w", name, err)
	}
	return &Bucket{b: nb}, nil
}

// DeleteBucket removes the nested bucket name; a missing one is not an error.
func (b *Bucket) DeleteBucket(name string) error {
	if b.b == nil {
		return errReadOnly
	}
	err := b.b.DeleteBucket([]byte(name))
	if errors.Is(err, errBucketNotFound) {
		return nil
	}
	return err
}
