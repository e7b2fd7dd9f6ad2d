package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// migration moves the database from version N to N+1 inside one transaction.
type migration struct {
	name  string
	apply func(tx *bolt.Tx) error
}

// migrations is the ordered schema history; index i upgrades version i to i+1.
// Append only: never edit or reorder a released migration.
var migrations = []migration{
	{name: "create meta, registry and data buckets", apply: func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketRegistry, bucketData} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		return nil
	}},
}

// SchemaVersion is the version this build writes.
var SchemaVersion = uint64(len(migrations))

func (db *DB) migrate(ms []migration) error {
	var current uint64
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		current = readVersion(tx)
		return nil
	}); err != nil {
		return err
	}
	if current > uint64(len(ms)) {
		return fmt.Errorf("%w: found version %d, this build knows %d (upgrade berth)", ErrNewerSchema, current, len(ms))
	}
	for v := current; v < uint64(len(ms)); v++ {
		m := ms[v]
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			if err := m.apply(tx); err != nil {
				return err
			}
			return writeVersion(tx, v+1)
		})
		if err != nil {
			return fmt.Errorf("migration %d (%s): %w", v+1, m.name, err)
		}
	}
	return nil
}
