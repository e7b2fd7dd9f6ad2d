package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// filledDB writes a registry record, workflow sessions and a server
// approval for two projects, plus enough index data to span many pages,
// and closes the database.
func filledDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "berth.db")
	db, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"alpha-1", "beta-2"} {
		if err := db.PutProject(ProjectRecord{ID: id, Root: "/p/" + id, Name: id}); err != nil {
			t.Fatal(err)
		}
		err := db.Area(id, "workflow").Update(func(b *Bucket) error {
			s, err := b.CreateBucket("sessions")
			if err != nil {
				return err
			}
			return s.Put([]byte("session-"+id), []byte(`{"phase":2}`))
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.Area(id, "servers").Update(func(b *Bucket) error {
			return b.Put([]byte("memory"), []byte(`{"digest":"d-`+id+`"}`))
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.Area(id, "index").Update(func(b *Bucket) error {
			for i := range 400 {
				if err := b.Put([]byte(fmt.Sprintf("chunk-%04d", i)), []byte(strings.Repeat("text ", 100))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenReportsCorruptFiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"bad header", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte(strings.Repeat("garbage!", 2048)), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"too short", func(t *testing.T, path string) {
			if err := os.Truncate(path, 100); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filledDB(t)
			tc.damage(t, path)
			before, _ := os.ReadFile(path)
			_, err := Open(path, time.Second)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("open a %s database: %v", tc.name, err)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatal("Open changed the corrupt file")
			}
			// What can be read is copied into a fresh database; the rest is named.
			aside, err := MoveAside(path)
			if err != nil || !strings.HasPrefix(filepath.Base(aside), "berth.db.corrupt-") {
				t.Fatalf("move aside: %q %v", aside, err)
			}
			fresh, err := Open(path, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			rep := Salvage(aside, fresh)
			if rep.Copied == 0 && len(rep.Lost) == 0 {
				t.Fatalf("salvage of a %s database neither copied nor lost anything", tc.name)
			}
			for _, l := range rep.Lost {
				if l == "" {
					t.Fatal("an unnamed loss")
				}
			}
			t.Logf("%s: copied %d, lost %q", tc.name, rep.Copied, rep.Lost)
		})
	}
}

func TestSalvageCopiesRegistryWorkflowAndApprovalsButNotIndexes(t *testing.T) {
	path := filledDB(t)
	fresh, err := Open(filepath.Join(t.TempDir(), "new.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	rep := Salvage(path, fresh)
	if len(rep.Lost) != 0 || rep.Copied != 6 {
		t.Fatalf("salvage of an intact file: %+v, want 6 values copied", rep)
	}
	recs, bad, err := fresh.Projects()
	if err != nil || len(bad) != 0 || len(recs) != 2 {
		t.Fatalf("registry after salvage: %v %v %v", recs, bad, err)
	}
	var got []byte
	err = fresh.Area("beta-2", "workflow").View(func(b *Bucket) error {
		got = b.Bucket("sessions").Get([]byte("session-beta-2"))
		return nil
	})
	if err != nil || string(got) != `{"phase":2}` {
		t.Fatalf("workflow session after salvage: %q %v", got, err)
	}
	err = fresh.Area("alpha-1", "servers").View(func(b *Bucket) error {
		got = b.Get([]byte("memory"))
		return nil
	})
	if err != nil || string(got) != `{"digest":"d-alpha-1"}` {
		t.Fatalf("server approval after salvage: %q %v", got, err)
	}
	err = fresh.Area("beta-2", "index").View(func(b *Bucket) error {
		if b.Exists() {
			return errors.New("the index was copied")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSalvageOfGarbageNamesTheLoss(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(path, []byte(strings.Repeat("junk", 4096)), 0o600)
	fresh, err := Open(filepath.Join(t.TempDir(), "new.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	rep := Salvage(path, fresh)
	if rep.Copied != 0 || len(rep.Lost) != 1 || !strings.Contains(rep.Lost[0], "workflow sessions") {
		t.Fatalf("%+v", rep)
	}
}
