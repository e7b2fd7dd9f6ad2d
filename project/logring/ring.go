// Package logring keeps the broker's recent log records in memory: one
// bounded ring per project, fed by a slog.Handler wrapper that routes each
// record by its "project" attribute, and one ring of every record.
//
// A record reaches a project's ring only when it carries that project's id
// as the top-level "project" attribute (from Logger.With or the call
// itself), so one project's ring never holds another project's lines.
package logring

import (
	"sync"
	"time"
)

// ProjectKey is the attribute that names the project a record is about.
const ProjectKey = "project"

// Size limits: they bound the memory a ring can hold.
const (
	DefaultPerProject  = 1000 // records kept per project
	DefaultGlobal      = 1000 // records kept in the ring of every record
	DefaultMaxProjects = 64   // project rings kept; the least recently written goes first
	maxMessage         = 1024 // bytes of a message kept
	maxValue           = 256  // bytes of an attribute value kept
	maxAttrs           = 24   // attributes kept per record
)

// Record is one log record as kept in a ring.
type Record struct {
	Time    time.Time         `json:"time"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Project string            `json:"project,omitempty"`
	Attrs   map[string]string `json:"attrs,omitempty"`

	level int // slog.Level, for filtering
}

// Options size a Ring; zero fields take the defaults.
type Options struct {
	PerProject  int
	Global      int
	MaxProjects int
}

// Ring holds the recent records. It is safe for concurrent use.
type Ring struct {
	opts Options

	mu       sync.Mutex // guards global, projects and notify
	global   *buffer
	projects map[string]*buffer
	notify   func()
}

// New makes an empty Ring.
func New(o Options) *Ring {
	if o.PerProject <= 0 {
		o.PerProject = DefaultPerProject
	}
	if o.Global <= 0 {
		o.Global = DefaultGlobal
	}
	if o.MaxProjects <= 0 {
		o.MaxProjects = DefaultMaxProjects
	}
	return &Ring{opts: o, global: newBuffer(o.Global), projects: make(map[string]*buffer)}
}

// OnRecord sets a function called (without the ring's lock) after each
// record is kept. It must not block or log.
func (r *Ring) OnRecord(fn func()) {
	r.mu.Lock()
	r.notify = fn
	r.mu.Unlock()
}

// PerProject is how many records a project's ring keeps.
func (r *Ring) PerProject() int { return r.opts.PerProject }

func (r *Ring) add(rec Record) {
	r.mu.Lock()
	r.global.add(rec)
	if rec.Project != "" {
		b := r.projects[rec.Project]
		if b == nil {
			if len(r.projects) >= r.opts.MaxProjects {
				r.evictLocked()
			}
			b = newBuffer(r.opts.PerProject)
			r.projects[rec.Project] = b
		}
		b.add(rec)
	}
	fn := r.notify
	r.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// evictLocked drops the project ring written least recently.
func (r *Ring) evictLocked() {
	var oldest string
	var at time.Time
	for id, b := range r.projects {
		if oldest == "" || b.last.Before(at) {
			oldest, at = id, b.last
		}
	}
	delete(r.projects, oldest)
}

// Recent returns the records of project (every record when project is ""),
// oldest first, that match q: at least q.MinLevel, not before q.Since, and
// at most q.Limit of the newest (all when Limit <= 0).
func (r *Ring) Recent(project string, q Query) []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.global
	if project != "" {
		b = r.projects[project]
		if b == nil {
			return []Record{}
		}
	}
	return b.match(q)
}

// buffer is a fixed-size circular list of records.
type buffer struct {
	recs []Record
	next int  // where the next record goes
	full bool // recs has wrapped
	last time.Time
}

func newBuffer(n int) *buffer { return &buffer{recs: make([]Record, n)} }

func (b *buffer) add(rec Record) {
	b.recs[b.next] = rec
	b.next++
	if b.next == len(b.recs) {
		b.next, b.full = 0, true
	}
	b.last = time.Now()
}

// match walks newest to oldest, then returns the matches oldest first.
func (b *buffer) match(q Query) []Record {
	n := b.next
	if b.full {
		n = len(b.recs)
	}
	out := []Record{}
	for i := 0; i < n; i++ {
		rec := b.recs[(b.next-1-i+len(b.recs))%len(b.recs)]
		if !q.Since.IsZero() && rec.Time.Before(q.Since) {
			continue // concurrent loggers may append slightly out of order
		}
		if rec.level < int(q.MinLevel) {
			continue
		}
		out = append(out, rec)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
