package finder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options wire a Finder to its mount.
type Options struct {
	// Tools lists every tool the project's server offers now (Berth's own
	// and the running hosted servers'): project.Engine.Tools.
	Tools func(ctx context.Context) ([]*mcp.Tool, error)
	// Config is the project's configuration in force.
	Config func() config.Config
	// Servers lists the project's hosted servers; nil when it has none.
	Servers func() []hosted.Status
	// Cache keeps the tools of hosted servers by definition; nil: none.
	Cache *Cache
	Log   *slog.Logger
}

// Finder is one mount's tool finder: its middleware shapes each session's
// tools/list and answers find_tools and call_tool. Safe for concurrent use.
type Finder struct {
	opts Options

	gen    atomic.Uint64        // counts Changed calls
	view   atomic.Pointer[view] // what find_tools ranks; nil until first built
	buildM sync.Mutex           // one build at a time (taken without mu)

	mu       sync.Mutex // guards promoted
	promoted map[*mcp.ServerSession]map[string]bool

	poke chan struct{} // cap 1: refresh the cache
	// life bounds the loop's refreshes: Close cancels it (stop), so that a
	// refresh waiting for a hosted server's list ends at once.
	life context.Context
	stop context.CancelFunc
	done chan struct{}
}

// view is what find_tools ranks: every tool the project offers or has
// offered (a hosted server that does not run now, by its tools when it
// last ran), and the hosted servers whose tools it cannot rank.
type view struct {
	gen     uint64 // f.gen when its build began: the changes it reflects
	cat     *Catalog
	servers []ServerNote
	hosted  map[string]bool // names of the declared hosted servers
}

// ServerNote is a hosted server whose tools find_tools cannot rank, or
// ranks from its last run.
type ServerNote struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Note   string `json:"note"`
	Fix    string `json:"fix,omitempty"`
}

// New makes the finder of a mount. Close it at unmount.
func New(opts Options) *Finder {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	f := &Finder{opts: opts, promoted: map[*mcp.ServerSession]map[string]bool{},
		poke: make(chan struct{}, 1), done: make(chan struct{})}
	f.life, f.stop = context.WithCancel(context.Background())
	go f.loop()
	return f
}

// Changed tells the finder that the project's tools may have changed (a
// hosted server started, stopped or relisted; a config edit): what
// find_tools ranks is built again, and the cache of hosted tools is
// brought up to date.
func (f *Finder) Changed() {
	f.gen.Add(1)
	select {
	case f.poke <- struct{}{}:
	default:
	}
}

// Close stops the cache's updates.
func (f *Finder) Close() {
	f.stop()
	<-f.done
}

// loop refreshes the view and the cache after each change, so the cache
// follows the servers' lists even while nobody searches.
func (f *Finder) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.poke:
			if _, err := f.current(f.life); err != nil && f.life.Err() == nil {
				f.opts.Log.Warn("finder: list the project's tools", "err", err)
			}
		case <-f.life.Done():
			return
		}
	}
}

// current is the view, built again when the tools may have changed. A
// view counts as current only when its build began after the last
// Changed: one being built concurrently may have listed the tools before
// the change.
func (f *Finder) current(ctx context.Context) (*view, error) {
	if v := f.view.Load(); v != nil && v.gen == f.gen.Load() {
		return v, nil
	}
	f.buildM.Lock()
	defer f.buildM.Unlock()
	g := f.gen.Load()
	if v := f.view.Load(); v != nil && v.gen == g {
		return v, nil // built while this one waited
	}
	v, err := f.build(ctx)
	if err != nil {
		return nil, err
	}
	v.gen = g
	f.view.Store(v)
	return v, nil
}

// build lists the project's tools and the hosted servers, keeps the tools
// of each running server in the cache, and takes the cached tools of
// those that do not run.
func (f *Finder) build(ctx context.Context) (*view, error) {
	tools, err := f.opts.Tools(ctx)
	if err != nil {
		return nil, err
	}
	var servers []hosted.Status
	if f.opts.Servers != nil {
		servers = f.opts.Servers()
	}
	v := &view{hosted: map[string]bool{}}
	byServer := map[string][]*mcp.Tool{}
	var entries []*Tool
	var errs []error
	for _, t := range tools {
		server, _, hostedTool := strings.Cut(t.Name, Sep)
		if !hostedTool {
			server = ""
		}
		byServer[server] = append(byServer[server], t)
		e, err := NewTool(t, server)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries = append(entries, e)
	}
	for _, st := range servers {
		v.hosted[st.Name] = true
		listed := byServer[st.Name]
		switch st.State {
		case hosted.StateRunning:
			f.remember(st, listed)
			continue
		case hosted.StateNeedsApproval, hosted.StateDisabled, hosted.StateInvalid:
			v.servers = append(v.servers, ServerNote{Server: st.Name, State: string(st.State),
				Note: "its tools cannot be called here: " + orNone(st.LastError), Fix: st.Fix})
			continue
		}
		if len(listed) > 0 {
			continue // installed from a listing; the server is restarting
		}
		cached := f.cached(st)
		if cached == nil {
			v.servers = append(v.servers, ServerNote{Server: st.Name, State: string(st.State),
				Note: fmt.Sprintf("it has not run here yet, so its tools are not known: call_tool of one of its tools (%s%s<tool>) starts it, and find_tools then ranks them", st.Name, Sep),
				Fix:  st.Fix})
			continue
		}
		v.servers = append(v.servers, ServerNote{Server: st.Name, State: string(st.State),
			Note: fmt.Sprintf("not running now: its %d tools are ranked as it listed them when it last ran; call_tool starts it", len(cached))})
		for _, t := range cached {
			if e, err := NewTool(t, st.Name); err == nil {
				entries = append(entries, e)
			}
		}
	}
	if len(errs) > 0 {
		f.opts.Log.Warn("finder: tools left out of find_tools", "err", errors.Join(errs...))
	}
	if f.opts.Cache != nil && f.opts.Servers != nil {
		keep := map[string]bool{}
		for _, st := range servers {
			keep[st.Digest] = true
		}
		if err := f.opts.Cache.Prune(keep); err != nil {
			f.opts.Log.Warn("finder: forget the tools of servers no longer declared", "err", err)
		}
	}
	v.cat = NewCatalog(entries)
	return v, nil
}

// remember keeps a running server's tools in the cache.
func (f *Finder) remember(st hosted.Status, tools []*mcp.Tool) {
	if f.opts.Cache == nil || st.Digest == "" {
		return
	}
	if err := f.opts.Cache.Save(st.Name, st.Digest, tools); err != nil {
		f.opts.Log.Warn("finder: keep a hosted server's tools", "server", st.Name, "err", err)
	}
}

// cached are the tools st's definition listed when it last ran, or nil.
func (f *Finder) cached(st hosted.Status) []*mcp.Tool {
	if f.opts.Cache == nil || st.Digest == "" {
		return nil
	}
	tools, err := f.opts.Cache.Load(st.Digest)
	if err != nil {
		f.opts.Log.Warn("finder: read a hosted server's tools", "server", st.Name, "err", err)
		return nil
	}
	return tools
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
