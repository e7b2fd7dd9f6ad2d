package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var errBucketNotFound = bolterrors.ErrBucketNotFound

// ProjectRecord is what the broker remembers about a project between runs.
type ProjectRecord struct {
	ID     string `json:"id"`
	Root   string `json:"root"`
	Name   string `json:"name"`
	Pinned bool   `json:"pinned"` // attached by `berth attach`: mounted again when the broker starts
	// LastPort is the port the project had last: reserved for it while it
	// is not mounted, so that its clients' saved URLs keep reaching it.
	LastPort int `json:"last_port,omitempty"`
	// UsedAt is when the project was last served: set when it stops being
	// served, and when it mounts if older than an hour. The least recently
	// used reservation is the one given away when a range has no free port.
	UsedAt    time.Time `json:"used_at,omitzero"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// WorktreeAdmin is the admin folder (COMMON/worktrees/NAME) of a
	// project whose root is a linked git worktree: once both it and the
	// root are gone (`git worktree remove`, or `git worktree prune` after
	// the directory was deleted) the project is forgotten.
	WorktreeAdmin string `json:"worktree_admin,omitempty"`
	// Repository is the id of the git repository the project's root is a
	// confirmed worktree of; "" for none. Its sibling worktrees' approvals
	// of hosted servers count for it.
	Repository string `json:"repository,omitempty"`
}

// PutProject stores rec under its ID.
func (db *DB) PutProject(rec ProjectRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return db.update(func(tx *bolt.Tx) error {
		reg, err := tx.CreateBucketIfNotExists(bucketRegistry)
		if err != nil {
			return err
		}
		return reg.Put([]byte(rec.ID), raw)
	})
}

// EditProjects applies edit to the records of ids, in one transaction;
// ids without a record, or whose record cannot be decoded, are passed
// over. edit reports whether it changed the record: only those are written.
func (db *DB) EditProjects(ids []string, edit func(*ProjectRecord) bool) error {
	return db.update(func(tx *bolt.Tx) error {
		reg := tx.Bucket(bucketRegistry)
		if reg == nil {
			return nil
		}
		for _, id := range ids {
			var rec ProjectRecord
			if raw := reg.Get([]byte(id)); raw == nil || json.Unmarshal(raw, &rec) != nil || !edit(&rec) {
				continue
			}
			raw, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := reg.Put([]byte(id), raw); err != nil {
				return err
			}
		}
		return nil
	})
}

// ForgetProject deletes everything kept for project id: its registry
// record and its data (index, sessions, approvals, workflow state).
// Forgetting an unknown project is not an error.
func (db *DB) ForgetProject(id string) error {
	return db.update(func(tx *bolt.Tx) error {
		if reg := tx.Bucket(bucketRegistry); reg != nil {
			if err := reg.Delete([]byte(id)); err != nil {
				return fmt.Errorf("forget project %s: %w", id, err)
			}
		}
		data := tx.Bucket(bucketData)
		if data == nil {
			return nil
		}
		if err := data.DeleteBucket([]byte(id)); err != nil && !errors.Is(err, errBucketNotFound) {
			return fmt.Errorf("forget the data of project %s: %w", id, err)
		}
		return nil
	})
}

// GetProject returns the record for id, and whether it exists.
func (db *DB) GetProject(id string) (ProjectRecord, bool, error) {
	var rec ProjectRecord
	var found bool
	err := db.bolt.View(func(tx *bolt.Tx) error {
		reg := tx.Bucket(bucketRegistry)
		if reg == nil {
			return nil
		}
		raw := reg.Get([]byte(id))
		if raw == nil {
			return nil
		}
		found = true
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("decode registry record %s: %w", id, err)
		}
		return nil
	})
	return rec, found, err
}

// Projects lists every registered project. Records that cannot be decoded
// are skipped and reported in bad.
func (db *DB) Projects() (recs []ProjectRecord, bad []string, err error) {
	err = db.bolt.View(func(tx *bolt.Tx) error {
		reg := tx.Bucket(bucketRegistry)
		if reg == nil {
			return nil
		}
		return reg.ForEach(func(k, v []byte) error {
			var rec ProjectRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				bad = append(bad, string(k))
				return nil
			}
			recs = append(recs, rec)
			return nil
		})
	})
	return recs, bad, err
}
