package watch

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Hub shares one fsnotify watcher (one inotify instance on Linux) among
// every [Watcher] made with [Shared]: the kernel allows a user few
// instances (fs.inotify.max_user_instances, often 128), and a broker
// serving hundreds of projects would otherwise run out, while watches
// (fs.inotify.max_user_watches, one per folder) are plentiful.
//
// One goroutine drains the shared watcher and hands each event to the
// watchers that watch the event's folder (or the path itself), without
// blocking: a watcher that falls more than [hubBuffer] events behind gets
// fsnotify.ErrEventOverflow instead, and rescans its folders, as it does
// when the kernel's own queue overflows. Errors go to every watcher.
type Hub struct {
	mu      sync.Mutex // guards everything below
	fw      *fsnotify.Watcher
	err     error                          // why fw could not be made
	refs    map[string]map[*hubClient]bool // watched path -> the watchers watching it
	clients map[*hubClient]bool
	closed  bool
	done    chan struct{} // closed when the dispatch goroutine has returned
}

// hubBuffer is how many events a watcher may fall behind the hub. Every
// watcher holds its buffer for life (24 bytes an event), and an idle
// project has two watchers: a burst past it (a checkout touching hundreds of
// files at once) costs a rescan of the watcher's folders, not an event lost.
const hubBuffer = 256

// NewHub returns a hub; its fsnotify watcher is made with the first
// watcher that uses it.
func NewHub() *Hub {
	return &Hub{refs: map[string]map[*hubClient]bool{}, clients: map[*hubClient]bool{}, done: make(chan struct{})}
}

// Shared makes [New] watch through h instead of an fsnotify watcher of its own.
func Shared(h *Hub) Option { return func(w *Watcher) { w.hub = h } }

// client registers a new watcher's backend.
func (h *Hub) client() (*hubClient, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("watch: the shared watcher is closed")
	}
	if h.fw == nil && h.err == nil {
		h.fw, h.err = fsnotify.NewWatcher()
		if h.err == nil {
			go h.dispatch(h.fw)
		} else {
			close(h.done)
		}
	}
	if h.err != nil {
		return nil, fmt.Errorf("watch: %w (raise fs.inotify.max_user_instances?)", h.err)
	}
	c := &hubClient{h: h, events: make(chan fsnotify.Event, hubBuffer), errs: make(chan error, 1), paths: map[string]bool{}}
	h.clients[c] = true
	return c, nil
}

// dispatch hands fw's events and errors to the clients until fw closes.
func (h *Hub) dispatch(fw *fsnotify.Watcher) {
	defer close(h.done)
	events, errs := fw.Events, fw.Errors
	for events != nil || errs != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			h.mu.Lock()
			for c := range h.refs[filepath.Dir(ev.Name)] {
				c.send(ev)
			}
			for c := range h.refs[ev.Name] {
				if !h.refs[filepath.Dir(ev.Name)][c] {
					c.send(ev)
				}
			}
			h.mu.Unlock()
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			h.mu.Lock()
			for c := range h.clients {
				c.fail(err)
			}
			h.mu.Unlock()
		}
	}
}

// Close closes the shared watcher, after the watchers using it are closed.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	fw := h.fw
	h.mu.Unlock()
	if fw == nil {
		return nil
	}
	err := fw.Close()
	<-h.done
	return err
}

// Watching is how many paths the hub watches for how many watchers.
func (h *Hub) Watching() (paths, watchers int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.refs), len(h.clients)
}

// hubClient is one watcher's backend on the hub. Its channels are closed
// by Close, under the hub's lock, so dispatch never sends on a closed one.
type hubClient struct {
	h      *Hub
	events chan fsnotify.Event
	errs   chan error
	paths  map[string]bool // guarded by h.mu
	closed bool            // guarded by h.mu
}

// send delivers ev, or an overflow when the watcher is too far behind.
// The caller holds h.mu.
func (c *hubClient) send(ev fsnotify.Event) {
	select {
	case c.events <- ev:
	default:
		c.fail(fsnotify.ErrEventOverflow)
	}
}

// fail delivers err unless one is already waiting. The caller holds h.mu.
func (c *hubClient) fail(err error) {
	select {
	case c.errs <- err:
	default:
	}
}

// Add watches name for this client. The shared watcher is asked every
// time, watched already or not: the kernel drops a watch whose folder is
// removed, and a folder made again under the same name must be watched
// again even while another client still counts it.
func (c *hubClient) Add(name string) error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.closed {
		return fsnotify.ErrClosed
	}
	if err := c.h.fw.Add(name); err != nil {
		return err
	}
	if c.h.refs[name] == nil {
		c.h.refs[name] = map[*hubClient]bool{}
	}
	c.h.refs[name][c] = true
	c.paths[name] = true
	return nil
}

// Remove stops watching name for this client; the shared watcher stops
// when no client watches it.
func (c *hubClient) Remove(name string) error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.removeLocked(name)
}

func (c *hubClient) removeLocked(name string) error {
	if !c.paths[name] {
		return fsnotify.ErrNonExistentWatch
	}
	delete(c.paths, name)
	delete(c.h.refs[name], c)
	if len(c.h.refs[name]) > 0 {
		return nil
	}
	delete(c.h.refs, name)
	if c.h.closed {
		return nil
	}
	return c.h.fw.Remove(name) // already gone for a removed folder
}

// Close removes the client's watches and closes its channels.
func (c *hubClient) Close() error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	for name := range c.paths {
		_ = c.removeLocked(name)
	}
	delete(c.h.clients, c)
	close(c.events)
	close(c.errs)
	return nil
}
