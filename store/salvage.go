package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// SalvageReport says what Salvage copied out of a corrupt database and what
// it could not read.
type SalvageReport struct {
	Copied    int // values copied: Registry + Workflow + Approvals
	Registry  int // registry records
	Workflow  int // workflow values (sessions, active sessions, imports)
	Approvals int // approvals of hosted servers
	Projects  int // projects whose workflow state or approvals were copied
	// Dropped counts the approvals of hosted servers found but not copied
	// because nothing proves them current: found on pages cut off from
	// the root, or under a root whose twin meta page is damaged (the last
	// transaction, a revocation maybe, may be lost). A salvage never
	// turns a revoked approval back into one: those servers wait for
	// approval again.
	Dropped int
	// Unlinked counts the copied values found on pages the database's
	// root no longer leads to (cut off by the damage): such a page may
	// hold an older version of what was lost.
	Unlinked int
	Lost     []string // what could not be read, by name
}

// Kept says what was copied, in words.
func (r SalvageReport) Kept() string {
	s := fmt.Sprintf("%d registry records; %d workflow values and %d server approvals of %d projects", r.Registry, r.Workflow, r.Approvals, r.Projects)
	if r.Unlinked > 0 {
		s += fmt.Sprintf(" (%d of them from pages cut off from the database's root: they may be older versions)", r.Unlinked)
	}
	if r.Dropped > 0 {
		s += fmt.Sprintf("; %d server approvals were withdrawn, as nothing proves them current (their servers wait for `berth servers approve` again)", r.Dropped)
	}
	return s
}

// Salvage copies what can still be read from the corrupt database at from
// into db: the project registry, every project's workflow state and its
// approvals of hosted servers. Search indexes are derived and are not
// copied (projects index again on mount).
//
// It reads the file page by page without bbolt (rawpages.go), so a
// damaged header or a truncated file loses only the pages that are gone:
// it walks the buckets from the root the latest valid meta page names,
// and when pages are missing (or both meta pages are), it scans every
// other page and places the ones it can in their buckets through the
// pages that point to them. What cannot be read is named in the report,
// never silently dropped.
func Salvage(from string, db *DB) SalvageReport {
	var rep SalvageReport
	f, err := readRaw(from)
	if err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("everything in %s (registry and workflow sessions): %v", from, err))
		return rep
	}
	s := newSalvager(f)
	if f.meta != nil {
		s.walk(nil, f.meta.root)
	} else {
		rep.Lost = append(rep.Lost, "the database's header (both meta pages are damaged): its buckets were found by scanning every page instead")
	}
	if f.meta == nil || len(s.missing) > 0 {
		s.scanOrphans()
	}
	if f.meta == nil && s.scanned == 0 {
		rep.Lost = []string{fmt.Sprintf("everything in %s (registry and workflow sessions): it holds no readable bbolt page", from)}
		return rep
	}
	rep.Lost = append(rep.Lost, s.losses()...)
	if err := s.copyTo(db, &rep); err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("writing what was salvaged into %s: %v", db.path, err))
	}
	return rep
}

// salvager gathers the values of the buckets worth salvaging.
type salvager struct {
	f       *rawFile
	placed  map[uint64][]string // page -> its bucket path, for pages reached from the root
	values  map[string]*value   // bucket path and key -> value
	order   []string            // values' keys in the order found
	missing map[string][]string // bucket path -> why its pages could not be read
	// Of the pages scanned apart from the root's tree:
	scanned    int // branch and leaf pages read
	conflicts  int // keys found with differing values on several pages
	unresolved int // pages whose bucket could not be told
}

type value struct {
	path     []string
	key, val []byte
	unlinked bool
}

func newSalvager(f *rawFile) *salvager {
	return &salvager{f: f, placed: map[uint64][]string{}, values: map[string]*value{}, missing: map[string][]string{}}
}

// relevant reports whether the bucket at path is, or may lead to, one
// that is salvaged: registry, data/<project>/workflow/..., data/<project>/servers/...
func relevant(path []string) bool {
	switch {
	case len(path) == 0:
		return true
	case path[0] == string(bucketRegistry):
		return true
	case path[0] != string(bucketData):
		return false
	case len(path) <= 2:
		return true
	default:
		return path[2] == "workflow" || path[2] == "servers"
	}
}

// salvaged reports whether the values of the bucket at path are copied.
func salvaged(path []string) bool {
	return relevant(path) && (len(path) == 1 && path[0] == string(bucketRegistry) || len(path) >= 3)
}

// walk reads the tree of the bucket at path from page id.
func (s *salvager) walk(path []string, id uint64) {
	if !relevant(path) {
		return
	}
	p, err := s.f.page(id, s.f.psize)
	if err != nil {
		s.lose(path, fmt.Sprintf("page %d: %v", id, err))
		return
	}
	if _, ok := s.placed[id]; ok {
		return // a cycle in a damaged file
	}
	s.placed[id] = path
	leaf, els, err := elements(p)
	if err != nil {
		s.lose(path, fmt.Sprintf("page %d: %v", id, err))
	}
	if !leaf {
		for _, el := range els {
			s.walk(path, el.child)
		}
		return
	}
	s.leaf(path, els, false, func(sub []string, root uint64) { s.walk(sub, root) })
}

// leaf takes a leaf page's entries: values are kept, inline buckets read
// at once, and other buckets handed to follow.
func (s *salvager) leaf(path []string, els []element, unlinked bool, follow func(sub []string, root uint64)) {
	for _, el := range els {
		if !el.bucket {
			if salvaged(path) {
				s.keep(path, el.key, el.value, unlinked)
			}
			continue
		}
		sub := append(slices.Clip(path), string(el.key))
		if !relevant(sub) {
			continue
		}
		root := le.Uint64(el.value)
		if root != 0 {
			if follow != nil {
				follow(sub, root)
			}
			continue
		}
		_, inner, err := elements(el.value[bucketHeaderSize:])
		if err != nil {
			s.lose(sub, fmt.Sprintf("its inline page: %v", err))
		}
		s.leaf(sub, inner, unlinked, nil)
	}
}

func (s *salvager) keep(path []string, key, val []byte, unlinked bool) {
	k := strings.Join(path, "\x00") + "\x00\x00" + string(key)
	if old, ok := s.values[k]; ok {
		if old.unlinked && unlinked && !bytes.Equal(old.val, val) {
			s.conflicts++
		}
		return // the root's tree wins; among cut-off pages, the first found
	}
	s.values[k] = &value{path: path, key: bytes.Clone(key), val: bytes.Clone(val), unlinked: unlinked}
	s.order = append(s.order, k)
}

func (s *salvager) lose(path []string, why string) {
	p := "/" + strings.Join(path, "/")
	s.missing[p] = append(s.missing[p], why)
}

// scanOrphans reads the pages the root's tree did not reach (excluding
// those the freelist names as stale), places each in its bucket through
// the pages that point to it (or, when none can be read, by what it
// holds: recognize), and keeps the values of those in salvaged buckets.
// A branch's pointer counts only when its key is the first key of the
// page it points to, which stale pointers into reused pages fail.
func (s *salvager) scanOrphans() {
	free := s.f.freePages()
	type parsed struct {
		leaf bool
		els  []element
	}
	pages := map[uint64]parsed{}
	end := s.f.pages()
	if s.f.meta != nil {
		end = min(end, s.f.meta.pgid)
	}
	for id := uint64(2); id < end; id++ {
		if free[id] {
			continue
		}
		p, err := s.f.page(id, s.f.psize)
		if err != nil {
			continue
		}
		if leaf, els, err := elements(p); err == nil {
			pages[id] = parsed{leaf, els}
			s.scanned++
		}
	}
	type link struct {
		from uint64
		name string // the bucket's name when from holds the bucket; "" for a branch
		bkt  bool
	}
	parents := map[uint64][]link{}
	for id, pg := range pages {
		for _, el := range pg.els {
			switch {
			case !pg.leaf:
				if c, ok := pages[el.child]; ok && len(c.els) > 0 && bytes.Equal(c.els[0].key, el.key) {
					parents[el.child] = append(parents[el.child], link{from: id})
				}
			case el.bucket:
				if r := le.Uint64(el.value); r != 0 {
					parents[r] = append(parents[r], link{from: id, name: string(el.key), bkt: true})
				}
			}
		}
	}
	memo := map[uint64][]string{}
	visiting := map[uint64]bool{}
	var place func(id uint64) ([]string, bool)
	place = func(id uint64) ([]string, bool) {
		if p, ok := s.placed[id]; ok {
			return append([]string{}, p...), true // never nil: nil is "not placed"
		}
		if p, ok := memo[id]; ok {
			return p, p != nil
		}
		if visiting[id] {
			return nil, false
		}
		visiting[id] = true
		defer delete(visiting, id)
		// Every pointer that can be placed must agree: a stale page may
		// point to a page reused since by another bucket.
		var found []string
		agree := true
		for _, l := range parents[id] {
			p, ok := place(l.from)
			if !ok {
				continue
			}
			if l.bkt {
				p = append(slices.Clip(p), l.name)
			}
			if found != nil && !slices.Equal(found, p) {
				agree = false
			}
			found = p
		}
		if found != nil && agree {
			memo[id] = found
			return found, true
		}
		if found == nil {
			if p := recognize(pages[id].els, pages[id].leaf, func(child uint64) []element {
				if c, ok := pages[child]; ok && c.leaf {
					return c.els
				}
				return nil
			}); p != nil {
				memo[id] = p
				return p, true
			}
		}
		memo[id] = nil
		return nil, false
	}
	ids := make([]uint64, 0, len(pages))
	for id := range pages {
		if _, ok := s.placed[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids) // pages written later tend to sit higher
	for _, id := range ids {
		path, ok := place(id)
		switch {
		case !ok:
			s.unresolved++
		case pages[id].leaf && relevant(path):
			s.leaf(path, pages[id].els, true, nil)
		}
	}
}

// recognize tells the bucket of a page no readable page points to, from
// its entries (store/doc.go draws the tree): the root bucket holds
// Berth's top-level buckets; data/ holds one bucket per project, each of
// them buckets named index, workflow or servers; a registry page holds
// records whose id is their key. leafOf returns a page's entries when it
// is a readable leaf. It returns nil for anything else.
func recognize(els []element, leaf bool, leafOf func(uint64) []element) []string {
	if !leaf || len(els) == 0 {
		return nil
	}
	switch {
	case allBuckets(els, string(bucketMeta), string(bucketRegistry), string(bucketData)) &&
		!(len(els) == 1 && string(els[0].key) == string(bucketMeta)):
		return []string{}
	case allRecords(els):
		return []string{string(bucketRegistry)}
	}
	projects := 0
	for _, el := range els {
		if !el.bucket {
			return nil
		}
		if root := le.Uint64(el.value); root != 0 && allBuckets(leafOf(root), "index", "workflow", "servers") {
			projects++
		}
	}
	if projects > 0 {
		return []string{string(bucketData)}
	}
	return nil
}

// allBuckets reports whether els are buckets, all with one of names.
func allBuckets(els []element, names ...string) bool {
	for _, el := range els {
		if !el.bucket || !slices.Contains(names, string(el.key)) {
			return false
		}
	}
	return len(els) > 0
}

// allRecords reports whether els are registry records (ProjectRecord
// JSON whose id is its key).
func allRecords(els []element) bool {
	for _, el := range els {
		var rec ProjectRecord
		if el.bucket || json.Unmarshal(el.value, &rec) != nil || rec.ID != string(el.key) || rec.Root == "" {
			return false
		}
	}
	return len(els) > 0
}

// losses names what could not be read.
func (s *salvager) losses() []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(s.missing)) {
		why := s.missing[p]
		name := "bucket " + p
		if p == "/" {
			name = "the root bucket"
		}
		more := ""
		if len(why) > 1 {
			more = fmt.Sprintf(" (and %d more pages)", len(why)-1)
		}
		out = append(out, fmt.Sprintf("%s: %s%s: what those pages held is lost, unless a copy was found elsewhere in the file", name, why[0], more))
	}
	if s.conflicts > 0 {
		out = append(out, fmt.Sprintf("%d keys were found in differing versions on pages cut off from the root: one of each was kept, maybe not the newest", s.conflicts))
	}
	if s.unresolved > 0 && len(out) > 0 {
		out = append(out, fmt.Sprintf("%d pages could not be placed in any bucket (stale copies, or cut off from the root with the pages that led to them): their contents were not copied", s.unresolved))
	}
	return out
}

// copyTo writes the values into db and counts them in rep; a value that
// cannot be written (its key is also a bucket's name) is named in rep.Lost.
func (s *salvager) copyTo(db *DB, rep *SalvageReport) error {
	projects := map[string]bool{}
	var failed []error
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		for _, k := range s.order {
			v := s.values[k]
			if v.path[0] == string(bucketData) && v.path[2] == "servers" && (v.unlinked || s.f.metas < 2) {
				rep.Dropped++ // an approval not proven current: distrust wins
				continue
			}
			b, err := tx.CreateBucketIfNotExists([]byte(v.path[0]))
			for _, name := range v.path[1:] {
				if err != nil {
					break
				}
				b, err = b.CreateBucketIfNotExists([]byte(name))
			}
			if err == nil {
				err = b.Put(v.key, v.val)
			}
			if err != nil {
				failed = append(failed, fmt.Errorf("bucket /%s key %q: %w", strings.Join(v.path, "/"), v.key, err))
				continue
			}
			rep.Copied++
			if v.unlinked {
				rep.Unlinked++
			}
			switch {
			case v.path[0] == string(bucketRegistry):
				rep.Registry++
			case v.path[2] == "workflow":
				rep.Workflow++
				projects[v.path[1]] = true
			default:
				rep.Approvals++
				projects[v.path[1]] = true
			}
		}
		rep.Projects = len(projects)
		return nil
	})
	return errors.Join(append([]error{err}, failed...)...)
}
