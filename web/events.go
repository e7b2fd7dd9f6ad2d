package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Hub streams the dashboard's state to browsers as Server-Sent Events:
// a "snapshot" event with the whole state when a client connects, after
// every Poke (coalesced) and every Interval. Each client has a small
// buffer; a client that falls behind is dropped (its EventSource reconnects
// and starts again from a fresh snapshot). Close ends every stream.
type Hub struct {
	snapshot func() any
	opts     HubOptions
	poke     chan struct{}

	mu      sync.Mutex // guards clients and closed
	clients map[*client]struct{}
	closed  bool
	done    chan struct{} // closed by Close
}

// HubOptions tune a Hub; zero fields take the defaults.
type HubOptions struct {
	Interval time.Duration // a snapshot at least this often (default 2s)
	MinGap   time.Duration // at most one snapshot per MinGap (default 250ms)
	Buffer   int           // events queued per client before it is dropped (default 8)
	// WriteTimeout ends a stream whose client stops reading (default 10s).
	WriteTimeout time.Duration
}

type client struct {
	events chan []byte
	gone   chan struct{} // closed when the hub drops the client
}

// NewHub makes a Hub that sends what snapshot returns, as JSON.
func NewHub(snapshot func() any, o HubOptions) *Hub {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.MinGap <= 0 {
		o.MinGap = 250 * time.Millisecond
	}
	if o.Buffer <= 0 {
		o.Buffer = 8
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	return &Hub{snapshot: snapshot, opts: o, poke: make(chan struct{}, 1), clients: make(map[*client]struct{}), done: make(chan struct{})}
}

// Poke asks for a snapshot soon. It never blocks.
func (h *Hub) Poke() {
	select {
	case h.poke <- struct{}{}:
	default:
	}
}

// Run sends snapshots until ctx ends or Close is called.
func (h *Hub) Run(ctx context.Context) {
	tick := time.NewTicker(h.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.done:
			return
		case <-tick.C:
		case <-h.poke:
		}
		if h.count() > 0 {
			if ev, err := h.event(); err == nil {
				h.broadcast(ev)
			}
			// A poke made while the snapshot was built is dropped: it may
			// come from the building itself (a log line), and a snapshot
			// that pokes must not loop. A real change shows at the next tick.
			select {
			case <-h.poke:
			default:
			}
		}
		select { // coalesce bursts of pokes
		case <-ctx.Done():
			return
		case <-h.done:
			return
		case <-time.After(h.opts.MinGap):
		}
	}
}

// Close drops every client and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	close(h.done)
	for c := range h.clients {
		h.dropLocked(c)
	}
}

func (h *Hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

func (h *Hub) event() ([]byte, error) {
	data, err := json.Marshal(h.snapshot())
	if err != nil {
		return nil, fmt.Errorf("dashboard snapshot: %w", err)
	}
	return fmt.Appendf(nil, "event: snapshot\ndata: %s\n\n", data), nil
}

func (h *Hub) broadcast(ev []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		select {
		case c.events <- ev:
		default:
			h.dropLocked(c) // it fell behind
		}
	}
}

func (h *Hub) dropLocked(c *client) {
	delete(h.clients, c)
	close(c.gone)
}

// ServeHTTP streams events until the client leaves, falls behind or the hub closes.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	first, err := h.event()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	c := &client{events: make(chan []byte, h.opts.Buffer), gone: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		http.Error(w, "broker is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.clients[c] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if _, ok := h.clients[c]; ok {
			h.dropLocked(c)
		}
		h.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(ev []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout))
		if _, err := w.Write(ev); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(append([]byte("retry: 2000\n\n"), first...)) {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.gone:
			return
		case ev := <-c.events:
			if !send(ev) {
				return
			}
		}
	}
}
