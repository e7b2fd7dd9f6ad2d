package mcpserve

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionArea is the project's area of berth.db that keeps its streamable
// HTTP sessions (data/<project>/sessions/<Mcp-Session-Id> -> JSON
// savedSession), so that a session id keeps working after a broker restart
// or upgrade. A session that ended (DELETE, eviction, session_timeout,
// `berth clients --close`) is deleted: it never comes back.
const sessionArea = "sessions"

// Bounds of the saved sessions of a project.
const (
	// seenEvery is how often a session's seen_at is written while it is
	// used: restore checks it against session_timeout.
	seenEvery = time.Minute
	// maxSaved caps what is kept of sessions a previous broker served and
	// nobody came back for (pruned at mount, newest kept).
	maxSaved = 256
)

// savedSession is what a session needs to be connected again: what the
// go-sdk's mcp.ServerSessionState holds after initialize.
type savedSession struct {
	Initialize *mcp.InitializeParams `json:"initialize"`
	Protocol   string                `json:"protocol_version,omitempty"`
	LogLevel   mcp.LoggingLevel      `json:"log_level,omitempty"`
	CreatedAt  time.Time             `json:"created_at"`
	SeenAt     time.Time             `json:"seen_at"`
}

// sessionStore saves a mount's streamable HTTP sessions in berth.db.
//
// No request waits for berth.db: every project shares its one writer, and
// another project's index save or workflow write may hold it for a while.
// Records are queued (save) and written by a goroutine that runs while
// the queue holds some, each batch in one short transaction, encoded
// before it. A session is saved a moment after its initialize is
// answered: a broker that dies in that moment loses it, and its client
// initializes again (the answer to an unknown session id is 404).
type Store struct {
	area    *store.Area
	timeout time.Duration // session_timeout: older saved sessions are not restored
	log     *slog.Logger

	mu       sync.Mutex // guards the fields below
	saved    map[string]*savedSession
	pending  map[string]*savedSession // to write; nil deletes
	inflight map[string]*savedSession // being written by the writer
	onDisk   map[string]bool          // sessions of this broker written to berth.db
	idle     chan struct{}            // closed when the writer has written all and stopped; nil while none runs
}

func NewStore(db *store.DB, projectID string, timeout time.Duration, log *slog.Logger) *Store {
	return &Store{area: db.Area(projectID, sessionArea), timeout: timeout, log: log,
		saved: make(map[string]*savedSession), pending: make(map[string]*savedSession), onDisk: make(map[string]bool)}
}

// save queues recs (nil deletes) for the writer, starting it if it is not
// running; it never waits for berth.db.
func (st *Store) save(recs map[string]*savedSession) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for id, rec := range recs {
		st.pending[id] = rec
	}
	if st.idle == nil {
		st.idle = make(chan struct{})
		go st.write(st.idle)
	}
}

// write writes what is queued, a batch per transaction, until nothing is;
// then it closes idle.
func (st *Store) write(idle chan struct{}) {
	for {
		st.mu.Lock()
		batch := st.pending
		if len(batch) == 0 {
			st.idle = nil
			st.mu.Unlock()
			close(idle)
			return
		}
		st.pending, st.inflight = make(map[string]*savedSession), batch
		st.mu.Unlock()
		ok := st.put(batch)
		st.mu.Lock()
		st.inflight = nil
		for id, rec := range batch {
			st.onDisk[id] = ok && rec != nil
			if !st.onDisk[id] {
				delete(st.onDisk, id)
			}
		}
		st.mu.Unlock()
	}
}

// isSaved reports whether session id is in berth.db: a broker restart
// keeps it.
func (st *Store) isSaved(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.onDisk[id]
}

// flush waits until every record queued so far is written.
func (st *Store) Flush() {
	st.mu.Lock()
	idle := st.idle
	st.mu.Unlock()
	if idle != nil {
		<-idle
	}
}

// expired reports whether a session last seen at seen is past session_timeout.
func (st *Store) expired(seen, now time.Time) bool {
	return st.timeout > 0 && now.Sub(seen) >= st.timeout
}

// put writes recs (nil deletes) in one transaction, encoded before it,
// and reports whether it did.
func (st *Store) put(recs map[string]*savedSession) bool {
	raws := make(map[string][]byte, len(recs))
	for id, rec := range recs {
		if rec == nil {
			raws[id] = nil
			continue
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			st.log.Warn("encode an MCP session to save it", "session", id, "err", err)
			continue
		}
		raws[id] = raw
	}
	err := st.area.Update(func(b *store.Bucket) error {
		for id, raw := range raws {
			if raw == nil {
				if err := b.Delete([]byte(id)); err != nil {
					return err
				}
				continue
			}
			if err := b.Put([]byte(id), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		st.log.Warn("save MCP sessions (they will not survive a broker restart)", "err", err)
	}
	return err == nil
}

// restore is the state of saved session id, or false when it is unknown,
// ended, or past session_timeout (then it is deleted). A record still
// queued, or being written, is the one that counts.
func (st *Store) Restore(id string) (*mcp.ServerSessionState, bool) {
	st.mu.Lock()
	queued, isQueued := st.pending[id]
	if !isQueued {
		queued, isQueued = st.inflight[id]
	}
	st.mu.Unlock()
	var raw []byte
	if isQueued && queued != nil {
		raw, _ = json.Marshal(queued)
	} else if !isQueued {
		if err := st.area.View(func(b *store.Bucket) error { raw = b.Get([]byte(id)); return nil }); err != nil {
			st.log.Warn("read a saved MCP session; the client initializes again", "session", id, "err", err)
			return nil, false
		}
	}
	if raw == nil {
		return nil, false
	}
	var rec savedSession
	now := time.Now()
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Initialize == nil || st.expired(rec.SeenAt, now) {
		st.save(map[string]*savedSession{id: nil})
		return nil, false
	}
	rec.SeenAt = now
	st.mu.Lock()
	st.saved[id] = &rec
	st.mu.Unlock()
	return &mcp.ServerSessionState{
		InitializeParams:          rec.Initialize,
		InitializedParams:         &mcp.InitializedParams{},
		NegotiatedProtocolVersion: rec.Protocol,
		LogLevel:                  rec.LogLevel,
	}, true
}

// forget deletes session id: it ended for good. It waits (at most
// forgetWait) for the deletion to be written, so that a session its client
// ended (DELETE) is not restored by the next broker should this one die
// right after answering; ending a session is rare, and its answer may wait
// a moment where an initialize's may not.
func (st *Store) Forget(id string) {
	st.mu.Lock()
	_, ok := st.saved[id]
	delete(st.saved, id)
	st.mu.Unlock()
	if ok {
		st.save(map[string]*savedSession{id: nil})
		st.flushWithin(forgetWait)
	}
}

// forgetWait bounds how long ending a session waits for berth.db.
const forgetWait = 2 * time.Second

// flushWithin is flush, giving up after d.
func (st *Store) flushWithin(d time.Duration) {
	st.mu.Lock()
	idle := st.idle
	st.mu.Unlock()
	if idle == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		st.log.Warn("ending a session: berth.db is busy; its record is deleted a moment later", "wait", d)
	}
}

// middleware saves each streamable HTTP session as its initialize succeeds,
// and again when it sets its log level; the records are written a moment
// later (save), never while the answer waits.
func (st *Store) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if err != nil || !ok || ss == nil || ss.ID() == "" || TransportName(ctx) != TransportHTTP {
			return res, err
		}
		switch method {
		case "initialize":
			p, _ := req.GetParams().(*mcp.InitializeParams)
			ir, _ := res.(*mcp.InitializeResult)
			if p == nil || ir == nil {
				break
			}
			now := time.Now().UTC()
			rec := &savedSession{Initialize: p, Protocol: ir.ProtocolVersion, CreatedAt: now, SeenAt: now}
			st.mu.Lock()
			st.saved[ss.ID()] = rec
			st.mu.Unlock()
			st.save(map[string]*savedSession{ss.ID(): rec})
		case "logging/setLevel":
			p, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
			st.mu.Lock()
			rec := st.saved[ss.ID()]
			if rec != nil && p != nil {
				c := *rec
				c.LogLevel = p.Level
				st.saved[ss.ID()], rec = &c, &c
			}
			st.mu.Unlock()
			if rec != nil && p != nil {
				st.save(map[string]*savedSession{ss.ID(): rec})
			}
		}
		return res, err
	}
}

// touch writes seen_at for the saved sessions the book saw use of since
// they were last written, at most every seenEvery; all, when all is set
// (the mount is closing).
func (st *Store) Touch(book *Book, now time.Time, all bool) {
	last := book.lastSeen()
	dirty := make(map[string]*savedSession)
	st.mu.Lock()
	for id, rec := range st.saved {
		seen, ok := last[id]
		if ok && seen.After(rec.SeenAt) && (all || seen.Sub(rec.SeenAt) >= seenEvery) {
			c := *rec
			c.SeenAt = seen.UTC()
			st.saved[id] = &c
			dirty[id] = &c
		}
	}
	st.mu.Unlock()
	if len(dirty) > 0 {
		st.save(dirty)
	}
}

// prune deletes the saved sessions past session_timeout, and the oldest
// past maxSaved: sessions a previous broker served that nobody came back
// for. It runs as the project mounts.
func (st *Store) Prune(now time.Time) {
	type kept struct {
		id   string
		seen time.Time
	}
	var all []kept
	drop := make(map[string]*savedSession)
	err := st.area.View(func(b *store.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			var rec savedSession
			if json.Unmarshal(v, &rec) != nil || rec.Initialize == nil || st.expired(rec.SeenAt, now) {
				drop[string(k)] = nil
				return nil
			}
			all = append(all, kept{string(k), rec.SeenAt})
			return nil
		})
	})
	if err != nil {
		st.log.Warn("read the saved MCP sessions to prune them; all are kept until the next mount", "err", err)
		return
	}
	if len(all) > maxSaved {
		slices.SortFunc(all, func(a, b kept) int { return b.seen.Compare(a.seen) })
		for _, k := range all[maxSaved:] {
			drop[k.id] = nil
		}
	}
	if len(drop) > 0 {
		st.save(drop)
		st.log.Info("saved MCP sessions dropped (past session_timeout, or too many)", "dropped", len(drop))
	}
}
