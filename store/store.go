package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Top-level bucket names.
var (
	bucketMeta     = []byte("meta")
	bucketRegistry = []byte("registry")
	bucketData     = []byte("data")

	keySchemaVersion = []byte("schema_version")
)

// ErrLocked reports that another process holds the database open.
var ErrLocked = errors.New("database is locked by another process")

// ErrNewerSchema reports a database written by a newer Berth.
var ErrNewerSchema = errors.New("database schema is newer than this berth")

// DB is the broker's bbolt database.
type DB struct {
	bolt    *bolt.DB
	path    string
	opening Opening
}

// Opening says what Open found in the file before using it, which nothing
// else would tell: an empty file taken as a new database, or one of the
// two meta pages damaged, where bbolt silently uses the other one, a
// transaction older (the last transaction before the damage may be lost).
type Opening struct {
	Empty      bool   // the file existed with 0 bytes
	RolledBack bool   // one meta page was damaged
	Txid       uint64 // with RolledBack: the transaction the database was opened at
}

// Open opens (creating if needed) the database at path, waiting at most
// timeout for the file lock, and applies pending migrations. What it found
// is in [DB.Opening].
func Open(path string, timeout time.Duration) (*DB, error) {
	if timeout <= 0 {
		timeout = time.Second
	}
	var opening Opening
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		opening.Empty = true
	} else if err == nil {
		if m, valid, err := readMetas(path); err == nil && valid == 1 {
			opening.RolledBack, opening.Txid = true, m.txid
		}
	}
	b, err := openChecked(path, timeout) // its errors name the file
	if err != nil {
		return nil, err
	}
	db := &DB{bolt: b, path: path, opening: opening}
	if err := db.migrate(migrations); err != nil {
		b.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return db, nil
}

// Opening is what Open found in the file before using it.
func (db *DB) Opening() Opening { return db.opening }

// Path is the database file's path.
func (db *DB) Path() string { return db.path }

// Close closes the database.
func (db *DB) Close() error { return db.bolt.Close() }

// Size is the database file's size in bytes.
func (db *DB) Size() int64 {
	fi, err := os.Stat(db.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// SchemaVersion reads the applied schema version.
func (db *DB) SchemaVersion() (uint64, error) {
	var v uint64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		v = readVersion(tx)
		return nil
	})
	return v, err
}

func readVersion(tx *bolt.Tx) uint64 {
	m := tx.Bucket(bucketMeta)
	if m == nil {
		return 0
	}
	raw := m.Get(keySchemaVersion)
	if len(raw) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(raw)
}

func writeVersion(tx *bolt.Tx, v uint64) error {
	m, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	var raw [8]byte
	binary.BigEndian.PutUint64(raw[:], v)
	return m.Put(keySchemaVersion, raw[:])
}
