package hosted

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Pool runs the hosted servers of every project: the broker has one. A
// share: project server runs once per project and definition; a share:
// user server once for every project that declares the same definition,
// reference counted, and stopped when the last project lets go of it.
type Pool struct {
	opts Options
	mu   sync.Mutex // guards ups and closed; never held while a server starts or stops
	ups  map[string]*shared
	// closed refuses new leases once Close began.
	closed bool

	stopReap chan struct{} // closed by Close: reapLoop ends
	reaped   chan struct{} // closed when it has
}

// shared is one upstream and the projects holding it.
type shared struct {
	key  string
	up   *upstream
	refs int // guarded by Pool.mu

	rootsMu sync.Mutex     // serializes changes of the roots the server is told
	roots   map[string]int // root URI -> holders
}

// lease is one project's hold on an upstream.
type lease struct {
	pool  *Pool
	s     *shared
	roots []string // URIs of the roots it told the server
	once  sync.Once
}

// NewPool returns an empty pool; [Pool.Close] stops what it runs. With
// opts.Home set it first ends the server processes the previous broker of
// that home left running (see [RecordFile], [TagEnv]).
func NewPool(opts Options) *Pool {
	opts = opts.withDefaults()
	opts.procs = newTracker(opts.Home, opts.Log)
	opts.turns = newStartTurns(opts.MaxStarting)
	p := &Pool{opts: opts, ups: map[string]*shared{}, reaped: make(chan struct{}), stopReap: make(chan struct{})}
	if opts.Home != "" {
		go p.reapLoop() // only a broker's pool adopts orphans (subreaper)
	} else {
		close(p.reaped)
	}
	return p
}

// reapEvery is how often the pool collects the processes its servers
// orphaned that have exited (Linux, where the broker adopts them).
const reapEvery = 5 * time.Second

// reapLoop reaps adopted processes until Close.
func (p *Pool) reapLoop() {
	defer close(p.reaped)
	t := time.NewTicker(reapEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.opts.procs.reap()
		case <-p.stopReap:
			return
		}
	}
}

// errClosed refuses work once the pool is closing.
var errClosed = errors.New("hosted servers are shutting down")

// poolKey names the process a declaration runs in: its digest and the
// content of the project's files it runs (files), so that a file approved
// again after a change runs in a new process.
func poolKey(spec ProjectSpec, name string, s config.Server, files string) string {
	switch {
	case s.Share == config.ShareUser:
		return "user\x00" + s.Digest() + "\x00" + files
	case sharedByRepository(spec, s):
		return "repository\x00" + spec.Repository + "\x00" + name + "\x00" + s.Digest() + "\x00" + files
	}
	projectID := spec.ID
	return "project\x00" + projectID + "\x00" + name + "\x00" + s.Digest() + "\x00" + files
}

// sharedByRepository reports whether s runs once for every worktree of
// the project's repository: share: repository in a project that is a
// worktree of one (elsewhere it runs once for the project).
func sharedByRepository(spec ProjectSpec, s config.Server) bool {
	return s.Share == config.ShareRepository && spec.Repository != ""
}

// serverDir is the working directory of a server: cwd, relative to the
// project root for share: project; the home directory for a share: user
// server that names none.
func serverDir(root string, s config.Server) string {
	switch {
	case s.Cwd != "" && filepath.IsAbs(s.Cwd):
		return s.Cwd
	case s.Cwd != "":
		return filepath.Join(root, s.Cwd)
	case s.Share == config.ShareUser:
		if home, err := os.UserHomeDir(); err == nil {
			return home
		}
		return string(filepath.Separator)
	}
	return root
}

// acquire holds the upstream for a declaration, reaching def (planned),
// creating it if needed. A project-declared server's process checks the
// files its approval covers before each start; the roots it is told are
// def's.
func (p *Pool) acquire(spec ProjectSpec, name string, d Decl, def *api.ServerDefinition) (*lease, error) {
	s := d.Server
	var files []api.ServerFile
	if d.Origin != OriginUser {
		files = def.Files
	}
	key := poolKey(spec, name, s, filesDigest(files))
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	sh := p.ups[key]
	if sh == nil {
		log := p.opts.Log
		if s.Share != config.ShareUser && !sharedByRepository(spec, s) && spec.Log != nil {
			log = spec.Log // its stderr belongs to this project's log ring
		}
		sh = &shared{key: key, roots: map[string]int{}}
		sh.up = newUpstream(name, s, def.Dir, approvedFiles(spec.Root, files), &p.opts, log)
		p.ups[key] = sh
	}
	sh.refs++
	p.mu.Unlock()
	l := &lease{pool: p, s: sh}
	for _, dir := range def.Roots {
		uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
		name := filepath.Base(dir)
		if dir == spec.Root {
			name = spec.Name
		}
		sh.addRoot(uri, name)
		l.roots = append(l.roots, uri)
	}
	if (s.Share == config.ShareUser || sharedByRepository(spec, s)) && spec.Echo != nil {
		sh.up.echo.add(l, spec.Echo)
	}
	if spec.OnLog != nil {
		sh.up.relay.add(l, spec.OnLog)
	}
	return l, nil
}

// addRoot tells the server about a project root it now serves (roots/list
// answers with every project holding it).
func (sh *shared) addRoot(uri, name string) {
	sh.rootsMu.Lock()
	defer sh.rootsMu.Unlock()
	sh.roots[uri]++
	if sh.roots[uri] == 1 {
		sh.up.client.AddRoots(&mcp.Root{URI: uri, Name: name})
	}
}

func (sh *shared) removeRoot(uri string) {
	sh.rootsMu.Lock()
	defer sh.rootsMu.Unlock()
	sh.roots[uri]--
	if sh.roots[uri] <= 0 {
		delete(sh.roots, uri)
		sh.up.client.RemoveRoots(uri)
	}
}

// release lets go of the lease; the last holder stops the server and
// waits for its process to be gone.
func (l *lease) release(ctx context.Context) error {
	var stop *upstream
	l.once.Do(func() {
		l.s.up.echo.remove(l)
		l.s.up.relay.remove(l)
		for _, uri := range l.roots {
			l.s.removeRoot(uri)
		}
		p := l.pool
		p.mu.Lock()
		defer p.mu.Unlock()
		sh := l.s
		sh.refs--
		if sh.refs == 0 {
			if p.ups[sh.key] == sh {
				delete(p.ups, sh.key)
			}
			stop = sh.up
		}
	})
	if stop == nil {
		return nil
	}
	return stop.stop(ctx)
}

// Close stops every server and waits for their processes (or ctx).
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	first := !p.closed
	p.closed = true
	all := make([]*upstream, 0, len(p.ups))
	for k, sh := range p.ups {
		all = append(all, sh.up)
		delete(p.ups, k)
	}
	p.mu.Unlock()
	errs := make(chan error, len(all))
	for _, u := range all {
		go func() { errs <- u.stop(ctx) }()
	}
	var err error
	for range all {
		err = errors.Join(err, <-errs)
	}
	if first {
		close(p.stopReap)
		<-p.reaped
		p.opts.procs.close() // what the servers orphaned, now that none runs
	}
	return err
}

// Process is one running (or supervised) server process of the pool, for
// metrics and `berth servers` across projects.
type Process struct {
	Server   string `json:"server"` // the name of the first project declaration
	Share    string `json:"share"`
	Projects int    `json:"projects"` // leases held on it
	Status
}

// Processes lists every upstream the pool supervises.
func (p *Pool) Processes() []Process {
	p.mu.Lock()
	list := make([]*shared, 0, len(p.ups))
	refs := make([]int, 0, len(p.ups))
	for _, sh := range p.ups {
		list = append(list, sh)
		refs = append(refs, sh.refs)
	}
	p.mu.Unlock()
	out := make([]Process, len(list))
	for i, sh := range list {
		out[i] = Process{Server: sh.up.label, Share: sh.up.def.Share, Projects: refs[i], Status: sh.up.status()}
	}
	return out
}
