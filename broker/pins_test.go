package broker

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/metrics"
	"github.com/berth-dev/berth/broker/mounttable"
	"github.com/berth-dev/berth/project"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/store/storetest"
)

// testBroker is a Broker with a real store and mount table and no
// listeners, for tests of the table's own logic.
func testBroker(t *testing.T, db *store.DB) *Broker {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	start, end := brokertest.PortRange(t, 8)
	log := slog.New(slog.DiscardHandler)
	b := &Broker{log: log, db: db}
	b.metrics = metrics.New(api.Version, func() metrics.Snapshot { return metrics.Snapshot{} })
	b.mounts = mounttable.New(mounttable.Deps{
		Ctx: ctx, DB: db, Log: log,
		Config: brokerconfig.Config{PortStart: start, PortEnd: end, MountGrace: time.Minute},
		Info:   project.ServerInfo{Version: api.Version, PID: os.Getpid(), StartedAt: time.Now()},
	})
	t.Cleanup(func() {
		b.mounts.CloseAll(context.Background())
		cancel()
	})
	return b
}

// pinnedSetup is a store whose registry holds root as pinned by a broker
// that is gone (killed with -9), as the new broker finds it.
func pinnedSetup(t *testing.T) (*store.DB, string, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(filepath.Join(root, api.ProjectDir), 0o755); err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	db := storetest.Open(t, "")
	id := api.ProjectID(root)
	if err := db.PutProject(store.ProjectRecord{ID: id, Root: root, Name: "shop", Pinned: true, LastPort: 1}); err != nil {
		t.Fatal(err)
	}
	return db, root, id
}

func assertPinned(t *testing.T, b *Broker, db *store.DB, id, when string) {
	t.Helper()
	rec, ok, err := db.GetProject(id)
	if err != nil || !ok || !rec.Pinned {
		t.Fatalf("%s: registry record %+v (found %v, %v): the pin is lost", when, rec, ok, err)
	}
	_, p, err := b.mounts.Get(id)
	if err != nil || !p.Pinned {
		t.Fatalf("%s: mount %+v, %v: not pinned", when, p, err)
	}
}

// A shim attaching to a new broker before it remounts its pinned projects
// must not record the project as unpinned: the remount, which reads the
// registry, would then skip it, and every restart after would too.
func TestShimAttachBeforeRemountKeepsThePin(t *testing.T) {
	db, root, id := pinnedSetup(t)
	b := testBroker(t, db)
	ctx := context.Background()
	if _, err := b.mounts.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	b.remountPinned(ctx)
	assertPinned(t, b, db, id, "shim attach, then remount")
}

func TestRemountBeforeShimAttachKeepsThePin(t *testing.T) {
	db, root, id := pinnedSetup(t)
	b := testBroker(t, db)
	ctx := context.Background()
	b.remountPinned(ctx)
	if _, err := b.mounts.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	assertPinned(t, b, db, id, "remount, then shim attach")
}

// The two at once, many times: whichever wins the table, the record ends pinned.
func TestShimAttachAndRemountAtOnceKeepThePin(t *testing.T) {
	for i := range 40 {
		db, root, id := pinnedSetup(t)
		b := testBroker(t, db)
		ctx := context.Background()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := b.mounts.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()}); err != nil {
				t.Error(err)
			}
		}()
		go func() { defer wg.Done(); b.remountPinned(ctx) }()
		wg.Wait()
		assertPinned(t, b, db, id, "round "+strconv.Itoa(i))
	}
}

// An unpin (`berth detach`) racing a pin ends as the table ends.
func TestPinAndUnpinAtOnceRecordTheTable(t *testing.T) {
	for i := range 40 {
		db, root, id := pinnedSetup(t)
		b := testBroker(t, db)
		ctx := context.Background()
		if _, err := b.mounts.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := b.mounts.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI}); err != nil {
				t.Error(err)
			}
		}()
		go func() { defer wg.Done(); _ = b.mounts.Detach(id, "") }()
		wg.Wait()
		_, p, err := b.mounts.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		rec, _, _ := db.GetProject(id)
		if rec.Pinned != p.Pinned {
			t.Fatalf("round %d: the table says pinned=%v, the registry %v", i, p.Pinned, rec.Pinned)
		}
	}
}
