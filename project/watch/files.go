package watch

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Files reports changes to a few named files of one folder, not its
// subfolders: a project's config files in .praxis-os/, whose other
// folders may be large. Changes are debounced like a [Watcher]'s (an
// editor's save is several events) and reported by one call of onChange,
// on the Files' own goroutine (changes meanwhile make one more call
// after it); the callee reads the files again. It watches through a
// [Hub] when made with [Shared].
type Files struct {
	dir    string
	names  []string
	fs     backend
	events <-chan fsnotify.Event
	errs   <-chan error
	change func()
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// WatchFiles starts watching the files names (base names) in dir.
func WatchFiles(dir string, names []string, onChange func(), opts ...Option) (*Files, error) {
	var probe Watcher
	for _, o := range opts {
		o(&probe)
	}
	f := &Files{dir: filepath.Clean(dir), names: names, change: onChange, stop: make(chan struct{}), done: make(chan struct{})}
	if probe.hub != nil {
		c, err := probe.hub.client()
		if err != nil {
			return nil, err
		}
		f.fs, f.events, f.errs = c, c.events, c.errs
	} else {
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, fmt.Errorf("watch: %w (raise fs.inotify.max_user_instances?)", err)
		}
		f.fs, f.events, f.errs = fw, fw.Events, fw.Errors
	}
	if err := f.fs.Add(f.dir); err != nil {
		f.fs.Close()
		return nil, fmt.Errorf("watch %s: %w", f.dir, err)
	}
	go f.run()
	return f, nil
}

func (f *Files) run() {
	defer close(f.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	events, errs := f.events, f.errs
	for {
		select {
		case <-f.stop:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Op == fsnotify.Chmod || filepath.Dir(ev.Name) != f.dir || !slices.Contains(f.names, filepath.Base(ev.Name)) {
				continue
			}
			timer.Reset(Quiet)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				timer.Reset(Quiet) // events were lost: read again
			}
		case <-timer.C:
			f.change()
		}
	}
}

// Close stops watching, after a call of onChange in progress returns.
func (f *Files) Close() error {
	var err error
	f.once.Do(func() {
		close(f.stop)
		<-f.done
		if cerr := f.fs.Close(); cerr != nil && !errors.Is(cerr, fsnotify.ErrClosed) {
			err = fmt.Errorf("watch: close: %w", cerr)
		}
	})
	return err
}
