package mounttable

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/store/storetest"
	bolt "go.etcd.io/bbolt"
)

func TestRememberWritesTheRegistryOnlyOnChange(t *testing.T) {
	db := storetest.Open(t, "")
	table := &Table{db: db, log: slog.New(slog.DiscardHandler)}
	m := &Mount{id: "shop-1", root: "/src/shop", name: "shop", port: 4300}
	sl := &slot{m: m}

	table.remember(sl, false)
	first, ok, err := db.GetProject(m.id)
	if err != nil || !ok || first.LastPort != 4300 || first.Pinned {
		t.Fatalf("first record = %+v, %v, %v", first, ok, err)
	}
	time.Sleep(2 * time.Millisecond) // so that a rewrite would show in UpdatedAt
	table.remember(sl, false)
	same, _, _ := db.GetProject(m.id)
	if !same.UpdatedAt.Equal(first.UpdatedAt) {
		t.Errorf("an unchanged record was written again: %v -> %v", first.UpdatedAt, same.UpdatedAt)
	}

	m.port = 4301
	sl.pinned = true
	table.remember(sl, true)
	changed, _, _ := db.GetProject(m.id)
	if changed.LastPort != 4301 || !changed.Pinned || !changed.UpdatedAt.After(first.UpdatedAt) || !changed.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("after a new port and a pin: %+v (first %+v)", changed, first)
	}
}

// Only a pin or an unpin changes the record's pinned flag.
func TestRememberKeepsThePinUnlessAskedToChangeIt(t *testing.T) {
	db := storetest.Open(t, "")
	table := &Table{db: db, log: slog.New(slog.DiscardHandler)}
	sl := &slot{m: &Mount{id: "shop-1", root: "/src/shop", name: "shop", port: 4300}, pinned: true}
	table.remember(sl, true)
	sl.pinned = false // a new broker's table, before it remounts the pin
	table.remember(sl, false)
	if rec, _, _ := db.GetProject("shop-1"); !rec.Pinned {
		t.Fatal("a write that is not an unpin cleared the pin")
	}
	table.remember(sl, true) // `berth detach`
	if rec, _, _ := db.GetProject("shop-1"); rec.Pinned {
		t.Fatal("an unpin left the pin")
	}
}

// A record that cannot be read (here one that does not decode) is not
// rewritten without its pin by a write that is not a pin change; a pin
// change writes it anew.
func TestRememberKeepsARecordItCannotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "berth.db")
	db, err := store.Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	table := &Table{db: db, log: slog.New(slog.DiscardHandler)}
	sl := &slot{m: &Mount{id: "shop-1", root: "/src/shop", name: "shop", port: 4300}, pinned: true}
	table.remember(sl, true)
	db.Close()
	corrupt := []byte(`{"id":"shop-1","pinned":true,"last_port":"not a number"}`)
	raw, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("registry")).Put([]byte("shop-1"), corrupt)
	}); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if db, err = store.Open(path, time.Second); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table.db = db
	if _, _, err := db.GetProject("shop-1"); err == nil {
		t.Fatal("the injected record decodes: the test injects no failure")
	}

	sl.pinned = false // a new broker's table, before it remounts the pin
	table.remember(sl, false)
	db.Close()
	raw, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	_ = raw.View(func(tx *bolt.Tx) error {
		kept = bytes.Clone(tx.Bucket([]byte("registry")).Get([]byte("shop-1")))
		return nil
	})
	raw.Close()
	if !bytes.Equal(kept, corrupt) {
		t.Fatalf("a write that is not a pin change rewrote a record it could not read: %s", kept)
	}

	if db, err = store.Open(path, time.Second); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table.db = db
	sl.pinned = true
	table.remember(sl, true) // `berth attach`
	if rec, ok, err := db.GetProject("shop-1"); err != nil || !ok || !rec.Pinned || rec.LastPort != 4300 {
		t.Fatalf("after a pin the record is %+v, %v, %v; want it written anew, pinned", rec, ok, err)
	}
}
