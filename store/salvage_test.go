package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bigDB writes 300 registry records (several pages), workflow sessions of
// three projects (one with a nested bucket of 200 sessions), server
// approvals and index data, in many transactions as a broker would. It
// returns the file and every salvaged value written: "/path/of/bucket key" -> value.
func bigDB(t testing.TB) (string, map[string]string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "berth.db")
	db, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	// Many small transactions, as a broker writes: pages are copied on
	// write, so the file holds stale copies and reused pages too.
	for batch := range 30 {
		var recs []ProjectRecord
		for i := batch * 10; i < batch*10+10; i++ {
			recs = append(recs, ProjectRecord{ID: fmt.Sprintf("proj-%03d", i), Root: fmt.Sprintf("/src/p%03d", i), Name: fmt.Sprintf("p%03d", i), Pinned: i%7 == 0})
		}
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			reg, err := tx.CreateBucketIfNotExists(bucketRegistry)
			for _, rec := range recs {
				raw, _ := json.Marshal(rec)
				if err == nil {
					err = reg.Put([]byte(rec.ID), raw)
				}
				want["/registry "+rec.ID] = string(raw)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for p := range 3 {
		id := fmt.Sprintf("proj-%03d", p)
		for batch := range 20 {
			err := db.Area(id, "workflow").Update(func(b *Bucket) error {
				s, err := b.CreateBucket("sessions")
				for i := batch * 10; i < batch*10+10 && err == nil; i++ {
					k, v := fmt.Sprintf("s%04d", i), fmt.Sprintf(`{"session":%d,"project":%q,"notes":%q}`, i, id, strings.Repeat("n", i%50))
					err = s.Put([]byte(k), []byte(v))
					want["/data/"+id+"/workflow/sessions "+k] = v
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			// index churn between the workflow writes, as mounts do
			err = db.Area(id, "index").Update(func(b *Bucket) error {
				for j := range 30 {
					if err := b.Put([]byte(fmt.Sprintf("c%d-%d", batch, j)), []byte(strings.Repeat("w ", 80))); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		err := db.Area(id, "servers").Update(func(b *Bucket) error { return b.Put([]byte("memory"), []byte(`{"digest":"d-`+id+`"}`)) })
		if err != nil {
			t.Fatal(err)
		}
		want["/data/"+id+"/servers memory"] = `{"digest":"d-` + id + `"}`
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

// dump lists every value of db's salvaged buckets, as bigDB's want.
func dump(t *testing.T, db *DB) map[string]string {
	t.Helper()
	got := map[string]string{}
	var visit func(path string, b *bolt.Bucket)
	visit = func(path string, b *bolt.Bucket) {
		_ = b.ForEach(func(k, v []byte) error {
			if v == nil {
				visit(path+"/"+string(k), b.Bucket(k))
			} else {
				got[path+" "+string(k)] = string(v)
			}
			return nil
		})
	}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) != string(bucketMeta) {
				visit("/"+string(name), b)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// salvageInto salvages path into a fresh database and returns what it holds.
func salvageInto(t *testing.T, path string) (SalvageReport, map[string]string) {
	t.Helper()
	fresh, err := Open(filepath.Join(t.TempDir(), "fresh.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	rep := Salvage(path, fresh)
	return rep, dump(t, fresh)
}

// checkSubset fails on a salvaged value that was never written, or
// written with other bytes: salvage invents nothing.
func checkSubset(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range got {
		if w, ok := want[k]; !ok || w != v {
			t.Errorf("salvaged %s = %.60q, written %.60q (present %v)", k, v, w, ok)
		}
	}
}

func TestSalvageOfAnIntactFileCopiesEverything(t *testing.T) {
	path, want := bigDB(t)
	rep, got := salvageInto(t, path)
	if len(rep.Lost) != 0 || rep.Copied != len(want) || len(got) != len(want) || rep.Unlinked != 0 {
		t.Fatalf("intact file: %+v, %d values in the fresh file, want %d and nothing lost", rep, len(got), len(want))
	}
	checkSubset(t, got, want)
	if rep.Registry != 300 || rep.Workflow != 600 || rep.Approvals != 3 || rep.Projects != 3 {
		t.Fatalf("counts %+v", rep)
	}
}

// Both meta pages overwritten: every page but those two is still there,
// and every value is found by scanning, but for the server approvals,
// which are withdrawn (nothing proves them current).
func TestSalvageWithTheHeaderOverwritten(t *testing.T) {
	path, want := bigDB(t)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("garbage!", 2*os.Getpagesize()/8)), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep, got := salvageInto(t, path)
	checkSubset(t, got, want)
	// Every value but the approvals: without a root nothing proves them current.
	if len(got) != len(want)-3 || rep.Dropped != 3 || rep.Approvals != 0 {
		t.Errorf("kept %d of %d values with only the header damaged: %s", len(got), len(want), rep.Kept())
	}
	if len(rep.Lost) == 0 || !strings.Contains(rep.Lost[0], "header") {
		t.Errorf("the report does not say the header was damaged: %q", rep.Lost)
	}
	t.Logf("kept %s; lost %q", rep.Kept(), rep.Lost)
}

// A truncated file keeps what the remaining pages hold, and says which
// buckets lost pages.
func TestSalvageOfATruncatedFileKeepsTheRest(t *testing.T) {
	for _, keep := range []float64{0.9, 0.6, 0.3} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			path, want := bigDB(t)
			fi, _ := os.Stat(path)
			cut := int64(float64(fi.Size())*keep) / 4096 * 4096
			if err := os.Truncate(path, cut); err != nil {
				t.Fatal(err)
			}
			rep, got := salvageInto(t, path)
			checkSubset(t, got, want)
			if len(got) == 0 {
				t.Fatalf("nothing kept of a file cut to %d%%: %q", int(keep*100), rep.Lost)
			}
			if rep.Copied != len(got) || rep.Registry+rep.Workflow+rep.Approvals != rep.Copied {
				t.Errorf("counts %+v, %d values in the fresh file", rep, len(got))
			}
			if len(got) < len(want) && len(rep.Lost) == 0 {
				t.Errorf("kept %d of %d values and reported no loss", len(got), len(want))
			}
			t.Logf("cut to %d bytes of %d: kept %s; lost %q", cut, fi.Size(), rep.Kept(), rep.Lost)
		})
	}
}

func FuzzSalvage(f *testing.F) {
	path, want := bigDB(f)
	orig, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(0), uint32(0), byte(0))
	f.Add(uint32(4096), uint32(100), byte(0xff))
	f.Add(uint32(len(orig)/2), uint32(len(orig)), byte(0))
	f.Fuzz(func(t *testing.T, at, n uint32, fill byte) {
		data := append([]byte(nil), orig...)
		at %= uint32(len(data))
		truncated := fill == 0 && n > uint32(len(orig))
		if truncated {
			data = data[:at]
		} else {
			for i := int(at); i < min(int(at)+int(n%uint32(3*4096)), len(data)); i++ {
				data[i] = fill
			}
		}
		p := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, got := salvageInto(t, p)
		if rep.Copied != len(got) || rep.Registry+rep.Workflow+rep.Approvals != rep.Copied {
			t.Fatalf("counts %+v, %d values in the fresh file", rep, len(got))
		}
		// bbolt pages carry no checksum: overwritten bytes inside a
		// value are copied as they are. Pages cut off are not invented.
		if truncated {
			checkSubset(t, got, want)
		}
	})
}

// zeroMetas overwrites the meta pages of the file at path with zeros:
// both, or only the one of the latest transaction.
func zeroMetas(t testing.TB, path string, both bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := metas(data)
	ps := int(m.pageSize)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for page := range 2 {
		if both || uint64(page) == m.txid%2 {
			if _, err := f.WriteAt(make([]byte, ps), int64(page*ps)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSalvageNeverBringsBackARevokedApproval: an approval revoked (its
// key deleted, or the project's approvals dropped) stays revoked through a
// salvage of a file whose meta pages are both gone, although the page that
// held it is still in the file; the approval's old page is found, and not
// copied. Approvals reached from an intact root are kept.
func TestSalvageNeverBringsBackARevokedApproval(t *testing.T) {
	for _, revoke := range []string{"one", "all"} {
		t.Run(revoke, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "berth.db")
			db, err := Open(path, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Area("proj-1", "workflow").Update(func(b *Bucket) error { return b.Put([]byte("s1"), []byte("{}")) }); err != nil {
				t.Fatal(err)
			}
			servers := db.Area("proj-1", "servers")
			put := func(k string) {
				if err := servers.Update(func(b *Bucket) error { return b.Put([]byte(k), []byte(`{"digest":"`+k+`"}`)) }); err != nil {
					t.Fatal(err)
				}
			}
			put("memory")
			put("kept")
			if revoke == "one" {
				err = servers.Update(func(b *Bucket) error { return b.Delete([]byte("memory")) })
			} else {
				err = servers.Drop()
			}
			if err != nil {
				t.Fatal(err)
			}
			db.Close() // the revocation is the last transaction, as when a broker stops after it

			rep, got := salvageInto(t, path) // intact: the root's tree is current
			if _, ok := got["/data/proj-1/servers memory"]; ok || rep.Dropped != 0 {
				t.Fatalf("intact file: the revoked approval is back (%s)", rep.Kept())
			}
			if _, ok := got["/data/proj-1/servers kept"]; (revoke == "one") != ok {
				t.Errorf("intact file: approval kept = %v after revoking %s", ok, revoke)
			}
			zeroMetas(t, path, true)
			raw, _ := os.ReadFile(path)
			if !strings.Contains(string(raw), `{"digest":"memory"}`) {
				t.Fatal("the revoked approval's old page is not in the file: the test proves nothing")
			}
			rep, got = salvageInto(t, path)
			for k := range got {
				if strings.Contains(k, "/servers ") {
					t.Errorf("salvage with no meta page copied the approval %s (%s)", k, rep.Kept())
				}
			}
			if got["/data/proj-1/workflow s1"] != "{}" {
				t.Errorf("the workflow value was not salvaged: %v", got)
			}
			if rep.Dropped == 0 || !strings.Contains(rep.Kept(), "withdrawn") {
				t.Errorf("the report does not say approvals were withdrawn: %s", rep.Kept())
			}
		})
	}
}

// TestOpenSaysWhatItFound: a 0-byte file and a file with the newest meta
// page damaged open, and Opening says so (bbolt alone says nothing); the
// damaged one opens at the transaction before.
func TestOpenSaysWhatItFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "berth.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if o := db.Opening(); !o.Empty || o.RolledBack {
		t.Errorf("a 0-byte file: %+v", o)
	}
	if err := db.Area("p", "servers").Update(func(b *Bucket) error { return b.Put([]byte("m"), []byte("1")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Area("p", "servers").Update(func(b *Bucket) error { return b.Delete([]byte("m")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	zeroMetas(t, path, false)
	db, err = Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := db.Opening()
	if o.Empty || !o.RolledBack || o.Txid == 0 {
		t.Errorf("one meta page damaged: %+v", o)
	}
	var back []byte
	db.Area("p", "servers").View(func(b *Bucket) error { back = b.Get([]byte("m")); return nil })
	if back == nil {
		t.Log("bbolt did not roll the deletion back (the damaged page was not the newest)")
	}
	if n, err := db.DropAreas("servers"); err != nil || (back != nil && n != 1) {
		t.Errorf("DropAreas: %d, %v", n, err)
	}
	db.Area("p", "servers").View(func(b *Bucket) error { back = b.Get([]byte("m")); return nil })
	if back != nil {
		t.Error("DropAreas left the approval")
	}
}
