package store

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openTemp(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "berth.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenWritesSchemaVersion(t *testing.T) {
	db := openTemp(t)
	v, err := db.SchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion {
		t.Fatalf("schema version = %d, want %d", v, SchemaVersion)
	}
}

func TestMigrationsRunInOrderOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "berth.db")
	db, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	extra := append(append([]migration(nil), migrations...),
		migration{name: "two", apply: func(tx *bolt.Tx) error { ran = append(ran, "two"); return nil }},
		migration{name: "three", apply: func(tx *bolt.Tx) error {
			ran = append(ran, "three")
			_, err := tx.CreateBucketIfNotExists([]byte("extra"))
			return err
		}},
	)
	if err := db.migrate(extra); err != nil {
		t.Fatal(err)
	}
	if err := db.migrate(extra); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 2 || ran[0] != "two" || ran[1] != "three" {
		t.Fatalf("migrations ran %v, want [two three] once", ran)
	}
	v, _ := db.SchemaVersion()
	if v != uint64(len(extra)) {
		t.Fatalf("version %d, want %d", v, len(extra))
	}
	db.Close()

	// This build knows fewer migrations than the file has: refuse, do not touch.
	_, err = Open(path, time.Second)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("open newer db: err = %v, want ErrNewerSchema", err)
	}
}

func TestFailedMigrationLeavesVersion(t *testing.T) {
	db := openTemp(t)
	boom := errors.New("boom")
	bad := append(append([]migration(nil), migrations...), migration{name: "bad", apply: func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists([]byte("half")); err != nil {
			return err
		}
		return boom
	}})
	if err := db.migrate(bad); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	v, _ := db.SchemaVersion()
	if v != SchemaVersion {
		t.Fatalf("version moved to %d after a failed migration", v)
	}
	db.bolt.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("half")) != nil {
			t.Error("failed migration left a bucket behind")
		}
		return nil
	})
}

func TestSecondOpenTimesOutAsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "berth.db")
	db, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Open(path, 50*time.Millisecond)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
}

func TestAreaIsolationAndCopies(t *testing.T) {
	db := openTemp(t)
	a, b := db.Area("proj-a", "index"), db.Area("proj-b", "index")
	var got []byte
	if err := a.View(func(bk *Bucket) error {
		if bk.Exists() || bk.Get([]byte("k")) != nil {
			t.Error("missing area should read empty")
		}
		if err := bk.Put([]byte("k"), []byte("v")); err == nil {
			t.Error("put into a missing area in a view should fail")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(func(bk *Bucket) error {
		sub, err := bk.CreateBucket("files")
		if err != nil {
			return err
		}
		return sub.Put([]byte("k"), []byte("value-a"))
	}); err != nil {
		t.Fatal(err)
	}
	a.View(func(bk *Bucket) error { got = bk.Bucket("files").Get([]byte("k")); return nil })
	if !bytes.Equal(got, []byte("value-a")) {
		t.Fatalf("got %q", got)
	}
	b.View(func(bk *Bucket) error {
		if v := bk.Bucket("files").Get([]byte("k")); v != nil {
			t.Errorf("project b sees project a's value %q", v)
		}
		return nil
	})
	if err := a.Drop(); err != nil {
		t.Fatal(err)
	}
	if err := a.Drop(); err != nil {
		t.Fatalf("second drop: %v", err)
	}
	a.View(func(bk *Bucket) error {
		if bk.Exists() {
			t.Error("area exists after drop")
		}
		return nil
	})
}

func TestRegistryRoundTrip(t *testing.T) {
	db := openTemp(t)
	rec := ProjectRecord{ID: "p1", Root: "/tmp/p1", Name: "p1", Pinned: true, LastPort: 4300}
	if err := db.PutProject(rec); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.GetProject("p1")
	if err != nil || !ok || got.Root != rec.Root || !got.Pinned || got.LastPort != 4300 {
		t.Fatalf("GetProject = %+v %v %v", got, ok, err)
	}
	if _, ok, _ := db.GetProject("p2"); ok {
		t.Fatal("an unknown id is found")
	}
	recs, bad, err := db.Projects()
	if err != nil || len(recs) != 1 || recs[0].ID != "p1" || len(bad) != 0 {
		t.Fatalf("Projects = %v %v %v", recs, bad, err)
	}
}
