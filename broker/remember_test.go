package broker

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
)

func TestRememberWritesTheRegistryOnlyOnChange(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "berth.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := &mounts{db: db, log: slog.New(slog.DiscardHandler)}
	m := &mount{id: "shop-1", root: "/src/shop", name: "shop", port: 4300}
	e := &entry{m: m}

	tbl.remember(e, false)
	first, ok, err := db.GetProject(m.id)
	if err != nil || !ok || first.LastPort != 4300 || first.Pinned {
		t.Fatalf("first record = %+v, %v, %v", first, ok, err)
	}
	time.Sleep(2 * time.Millisecond) // so that a rewrite would show in UpdatedAt
	tbl.remember(e, false)
	same, _, _ := db.GetProject(m.id)
	if !same.UpdatedAt.Equal(first.UpdatedAt) {
		t.Errorf("an unchanged record was written again: %v -> %v", first.UpdatedAt, same.UpdatedAt)
	}

	m.port = 4301
	e.pinned = true
	tbl.remember(e, true)
	changed, _, _ := db.GetProject(m.id)
	if changed.LastPort != 4301 || !changed.Pinned || !changed.UpdatedAt.After(first.UpdatedAt) || !changed.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("after a new port and a pin: %+v (first %+v)", changed, first)
	}
}

// Only a pin or an unpin changes the record's pinned flag.
func TestRememberKeepsThePinUnlessAskedToChangeIt(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "berth.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := &mounts{db: db, log: slog.New(slog.DiscardHandler)}
	e := &entry{m: &mount{id: "shop-1", root: "/src/shop", name: "shop", port: 4300}, pinned: true}
	tbl.remember(e, true)
	e.pinned = false // a new broker's table, before it remounts the pin
	tbl.remember(e, false)
	if rec, _, _ := db.GetProject("shop-1"); !rec.Pinned {
		t.Fatal("a write that is not an unpin cleared the pin")
	}
	tbl.remember(e, true) // `berth detach`
	if rec, _, _ := db.GetProject("shop-1"); rec.Pinned {
		t.Fatal("an unpin left the pin")
	}
}
