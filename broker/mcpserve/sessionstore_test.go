package mcpserve

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/store/storetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func testStore(t testing.TB, timeout time.Duration) (*Store, *store.DB) {
	t.Helper()
	db := storetest.Open(t, "")
	return NewStore(db, "p", timeout, slog.New(slog.DiscardHandler)), db
}

func saved(seen time.Time) *savedSession {
	return &savedSession{
		Initialize: &mcp.InitializeParams{ProtocolVersion: "2025-06-18", ClientInfo: &mcp.Implementation{Name: "c", Version: "1"}},
		Protocol:   "2025-06-18", LogLevel: "debug", CreatedAt: seen, SeenAt: seen,
	}
}

// TestSavedSessionsRestoreExpireAndEnd: a saved session restores with its
// state; one past session_timeout does not (and is deleted); one that
// ended never comes back; prune keeps the newest maxSaved.
func TestSavedSessionsRestoreExpireAndEnd(t *testing.T) {
	st, db := testStore(t, time.Hour)
	now := time.Now()
	st.put(map[string]*savedSession{"fresh": saved(now.Add(-time.Minute)), "stale": saved(now.Add(-2 * time.Hour))})

	state, ok := st.Restore("fresh")
	if !ok || state.InitializeParams.ClientInfo.Name != "c" || state.LogLevel != "debug" || state.NegotiatedProtocolVersion != "2025-06-18" || state.InitializedParams == nil {
		t.Fatalf("restore of a fresh session: %+v %v", state, ok)
	}
	if _, ok := st.Restore("stale"); ok {
		t.Fatal("a session unused past session_timeout was restored")
	}
	st.Flush()
	if _, ok := NewStore(db, "p", 0, st.log).Restore("stale"); ok {
		t.Fatal("the stale session was not deleted when it was refused")
	}
	st.Forget("fresh")
	if _, ok := st.Restore("fresh"); ok {
		t.Fatal("an ended session came back")
	}
	st.Flush()
	if _, ok := NewStore(db, "p", time.Hour, st.log).Restore("fresh"); ok {
		t.Fatal("an ended session is still in berth.db")
	}
	if _, ok := NewStore(db, "other", time.Hour, st.log).Restore("fresh"); ok {
		t.Fatal("another project restored this project's session")
	}

	many := make(map[string]*savedSession)
	for i := range maxSaved + 5 {
		many[fmt.Sprint(i)] = saved(now.Add(-time.Duration(i) * time.Second))
	}
	st.put(many)
	st.Prune(now)
	for i := range maxSaved + 5 {
		_, ok := st.Restore(fmt.Sprint(i))
		if want := i < maxSaved; ok != want {
			t.Fatalf("session %d after prune: restored %v, want %v (the newest %d kept)", i, ok, want, maxSaved)
		}
	}
}

// TestSavingASessionNeverWaitsForTheDatabase: while another project's
// write holds berth.db, sessions are saved (queued) at once; they reach
// berth.db once it is free, and one queued is restorable meanwhile.
func TestSavingASessionNeverWaitsForTheDatabase(t *testing.T) {
	st, db := testStore(t, time.Hour)
	holding, release := make(chan struct{}), make(chan struct{})
	go db.Area("other", "index").Update(func(*store.Bucket) error { // a long index save
		close(holding)
		<-release
		return nil
	})
	<-holding
	saving := make(chan struct{})
	go func() {
		st.save(map[string]*savedSession{"new": saved(time.Now())})
		close(saving)
	}()
	select {
	case <-saving:
	case <-time.After(10 * time.Second):
		t.Fatal("saving a session waited for another project's write")
	}
	if _, ok := st.Restore("new"); !ok {
		t.Fatal("a queued session is not restorable")
	}
	close(release)
	st.Flush()
	if _, ok := NewStore(db, "p", time.Hour, st.log).Restore("new"); !ok {
		t.Fatal("the session did not reach berth.db")
	}
}

// BenchmarkSaveSession is what the save costs each initialize on /mcp: one
// bbolt transaction (fsync included) writing the session's record.
func BenchmarkSaveSession(b *testing.B) {
	st, _ := testStore(b, time.Hour)
	rec := saved(time.Now())
	i := 0
	for b.Loop() {
		i++
		st.put(map[string]*savedSession{fmt.Sprint(i): rec})
	}
}

// A store that cannot be read (here closed under the mount) is reported,
// and neither prune nor restore acts on what it did not read.
func TestSavedSessionsReportAStoreTheyCannotRead(t *testing.T) {
	st, db := testStore(t, time.Hour)
	var logs bytes.Buffer
	st.log = slog.New(slog.NewTextHandler(&logs, nil))
	st.put(map[string]*savedSession{"fresh": saved(time.Now())})
	db.Close()
	st.Prune(time.Now())
	if _, ok := st.Restore("fresh"); ok {
		t.Fatal("restored a session from a store that cannot be read")
	}
	for _, want := range []string{"read the saved MCP sessions to prune them", "read a saved MCP session"} {
		if !strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "database not open") {
			t.Errorf("no warning %q naming the store's error in:\n%s", want, logs.String())
		}
	}
}
