package watch

import (
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/links"
	"github.com/fsnotify/fsnotify"
)

// Debounce timing (see the package doc).
const (
	Quiet    = 100 * time.Millisecond
	MaxDelay = 200 * time.Millisecond
	// Burst is how many changed paths make a batch at once, without
	// waiting: a checkout or a copy writing thousands of files reaches
	// the subscribers as it goes, so that they can read the first files
	// while the rest are written.
	Burst = 256
)

// backend is the part of fsnotify the owner goroutine drives; tests fake it.
type backend interface {
	Add(name string) error
	Remove(name string) error
	Close() error
}

// Watcher watches folders under a root and delivers batches of changed
// paths to its subscribers.
type Watcher struct {
	root    string
	targets []string // watched folders, clean and slash-separated, relative to root
	links   *links.Policy
	hub     *Hub // the shared fsnotify watcher, or nil for one of its own
	log     *slog.Logger
	fs      backend
	events  <-chan fsnotify.Event
	errs    <-chan error

	mu     sync.Mutex // guards subs and closed
	subs   []*subscriber
	closed bool

	stop chan struct{}
	done chan struct{} // closed when the owner goroutine has returned
	once sync.Once
}

// Option configures [New].
type Option func(*Watcher)

// FollowLinks sets which symlinks the watcher follows: a watched folder
// that is a link (or lies behind one) is watched only when p admits its
// target, and a file link whose target p admits has the target's folder
// watched too, so that an edit of the target is reported as a change of
// the link. Without it only links leading inside the root are followed.
func FollowLinks(p *links.Policy) Option { return func(w *Watcher) { w.links = p } }

// New starts watching dirs (relative to root) recursively. Folders that do
// not exist yet are watched for from their nearest existing parent.
func New(root string, dirs []string, logger *slog.Logger, opts ...Option) (*Watcher, error) {
	var probe Watcher
	for _, o := range opts {
		o(&probe)
	}
	if probe.hub != nil {
		c, err := probe.hub.client()
		if err != nil {
			return nil, err
		}
		w, err := newWatcher(root, dirs, logger, c, c.events, c.errs, opts...)
		if err != nil {
			c.Close()
			return nil, err
		}
		return w, nil
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w (raise fs.inotify.max_user_instances?)", err)
	}
	w, err := newWatcher(root, dirs, logger, fw, fw.Events, fw.Errors, opts...)
	if err != nil {
		fw.Close()
		return nil, err
	}
	return w, nil
}

func newWatcher(root string, dirs []string, logger *slog.Logger, fs backend, events <-chan fsnotify.Event, errs <-chan error, opts ...Option) (*Watcher, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("watch: root %q is not absolute", root)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{
		root:   filepath.Clean(root),
		log:    logger,
		fs:     fs,
		events: events,
		errs:   errs,
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	for _, o := range opts {
		o(w)
	}
	if w.links == nil {
		w.links = links.New(w.root, nil)
	}
	for _, d := range dirs {
		c := path.Clean(filepath.ToSlash(d))
		if filepath.IsAbs(d) || c == ".." || strings.HasPrefix(c, "../") {
			return nil, fmt.Errorf("watch: folder %q must be relative to the root", d)
		}
		w.targets = append(w.targets, c)
	}
	o := newOwner(w)
	o.ensure()
	go o.run()
	return w, nil
}

// Subscribe returns a channel that receives every batch of changed paths
// (relative to the root, slash-separated, sorted) from now on. The channel is
// closed by [Watcher.Close].
func (w *Watcher) Subscribe() <-chan []string {
	s := newSubscriber()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(s.out)
		return s.out
	}
	w.subs = append(w.subs, s)
	go s.forward(w.stop)
	return s.out
}

// publish hands a batch to every subscriber without blocking.
func (w *Watcher) publish(paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.subs {
		s.add(paths)
	}
}

// Close stops the watcher, waits for its goroutines and closes the
// subscribers' channels. Changes not yet delivered are dropped.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		subs := w.subs
		w.mu.Unlock()
		close(w.stop)
		<-w.done
		for _, s := range subs {
			<-s.done
		}
		if cerr := w.fs.Close(); cerr != nil && !errors.Is(cerr, fsnotify.ErrClosed) {
			err = fmt.Errorf("watch: close: %w", cerr)
		}
	})
	return err
}
