package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/api"
)

// loadTool is the get_server_info-class call of the load figure.
const loadTool = "get_server_info"

// scaleAndLoad mounts the projects (scale, memory), then drives the
// sessions (load) on the same broker.
func (r *runner) scaleAndLoad(ctx context.Context) error {
	r.progress("scale: writing %d projects of %d standards files", r.o.Projects, r.o.Files)
	var roots []string
	for i := range r.o.Projects {
		root, err := makeProject(filepath.Join(r.tmp, "scale"), fmt.Sprintf("p%03d", i), r.o.Files, uint64(100+i))
		if err != nil {
			return err
		}
		roots = append(roots, root)
	}
	b, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, "scale-home"), r.o.Projects+4)
	if err != nil {
		return err
	}
	defer b.stop()
	time.Sleep(500 * time.Millisecond) // let the start settle before the idle figure
	idle, err := rssMiB(ctx, b.pid())
	if err != nil {
		return err
	}
	r.rs.add("memory", "berth", "idle-rss", idle, "MiB", 1)

	r.progress("scale: mounting %d projects", len(roots))
	var mounts []time.Duration
	var urls []string
	for _, root := range roots {
		start := time.Now()
		resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
		if err != nil {
			return fmt.Errorf("mount %s: %w", root, err)
		}
		mounts = append(mounts, time.Since(start))
		if err := waitIndexed(ctx, b.client, resp.ID, time.Minute); err != nil {
			return err
		}
		urls = append(urls, resp.URL)
	}
	r.rs.add("scale", "berth", "mount-p50", ms(percentile(mounts, 50)), "ms", len(mounts))
	r.rs.add("scale", "berth", "mount-max", ms(percentile(mounts, 100)), "ms", len(mounts))
	// Idle: the broker returns a mount's garbage to the system at most a
	// second after the mount's index is ready (broker/memtrim).
	time.Sleep(2 * time.Second)
	mounted, err := rssMiB(ctx, b.pid())
	if err != nil {
		return err
	}
	r.rs.add("scale", "berth", "rss", mounted, "MiB", len(roots))
	r.rs.add("memory", "berth", "per-project-rss", (mounted-idle)/float64(len(roots)), "MiB", len(roots))
	if r.o.Profile != "" {
		if err := r.idleProfiles(ctx, b); err != nil {
			return err
		}
	}
	return r.load(ctx, b, urls)
}

// idleProfiles saves what the broker holds with every project mounted and
// no call made: its heap (with the runtime's memory statistics at the end
// of broker-idle-heap.txt) and its goroutines.
func (r *runner) idleProfiles(ctx context.Context, b *broker) error {
	if err := os.MkdirAll(r.o.Profile, 0o755); err != nil {
		return err
	}
	for name, file := range map[string]string{
		"heap":              "broker-idle-heap.pprof",
		"heap?debug=1":      "broker-idle-heap.txt",
		"goroutine":         "broker-idle-goroutine.pprof",
		"goroutine?debug=1": "broker-idle-goroutine.txt",
	} {
		if err := b.profile(ctx, name, filepath.Join(r.o.Profile, file)); err != nil {
			return fmt.Errorf("profile the idle broker: %w", err)
		}
	}
	return nil
}

// load drives r.o.Sessions concurrent HTTP sessions spread over the
// projects, each calling loadTool in a loop for r.o.Duration.
func (r *runner) load(ctx context.Context, b *broker, urls []string) error {
	before, err := b.goroutines(ctx)
	if err != nil {
		return fmt.Errorf("goroutines before: %w", err)
	}
	r.progress("load: %d sessions over %d projects, %s of %s calls", r.o.Sessions, len(urls), r.o.Duration, loadTool)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: r.o.Sessions, MaxIdleConns: 2 * r.o.Sessions}, Timeout: 30 * time.Second}
	sessions := make([]*httpSession, r.o.Sessions)
	for i := range sessions {
		s, err := openHTTPSession(ctx, hc, urls[i%len(urls)])
		if err != nil {
			return err
		}
		sessions[i] = s
	}

	var profErr error
	var profWG sync.WaitGroup
	if r.o.Profile != "" {
		if err := os.MkdirAll(r.o.Profile, 0o755); err != nil {
			return err
		}
		profWG.Add(1)
		go func() {
			defer profWG.Done()
			secs := max(1, int(r.o.Duration.Seconds())-1)
			profErr = b.profile(ctx, fmt.Sprintf("profile?seconds=%d", secs), filepath.Join(r.o.Profile, "broker-cpu.pprof"))
		}()
	}
	stopRSS := sampleRSS(ctx, b.pid())
	var errs atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, len(sessions))
	const maxCallsPerSession = 1_000_000
	start := time.Now()
	deadline := start.Add(r.o.Duration)
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := make([]time.Duration, 0, 4096)
			for n := 0; n < maxCallsPerSession && ctx.Err() == nil; n++ {
				t := time.Now()
				if t.After(deadline) {
					break
				}
				if err := s.callTool(ctx, loadTool); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
				l = append(l, time.Since(t))
			}
			lat[i] = l
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	peak := stopRSS()
	if r.o.Profile != "" {
		profWG.Wait()
		if profErr == nil {
			profErr = b.profile(ctx, "heap", filepath.Join(r.o.Profile, "broker-heap.pprof"))
		}
		if profErr != nil {
			return fmt.Errorf("profile the broker: %w", profErr)
		}
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	r.rs.add("load", "berth", "calls-per-s", float64(len(all))/elapsed.Seconds(), "calls/s", len(all))
	r.rs.add("load", "berth", "p50", ms(percentile(all, 50)), "ms", len(all))
	r.rs.add("load", "berth", "p99", ms(percentile(all, 99)), "ms", len(all))
	r.rs.add("load", "berth", "errors", float64(errs.Load()), "errors", len(all))
	r.rs.add("load", "berth", "rss-peak", peak, "MiB", len(all))
	if e := firstErr.Load(); e != nil {
		r.progress("load: first error: %s", e)
	}

	for _, s := range sessions {
		if err := s.close(ctx); err != nil {
			r.progress("load: close session: %v", err)
		}
	}
	hc.CloseIdleConnections()
	// The broker ends the sessions' goroutines asynchronously: wait for
	// the count to settle back (at most 10 s).
	after := 0
	for i := 0; i < 100; i++ {
		if after, err = b.goroutines(ctx); err != nil {
			return fmt.Errorf("goroutines after: %w", err)
		}
		if after <= before {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.rs.add("load", "berth", "goroutines-before", float64(before), "goroutines", 1)
	r.rs.add("load", "berth", "goroutines-after", float64(after), "goroutines", 1)
	return nil
}

// sampleRSS samples pid's RSS every 100 ms until the returned function is
// called; that returns the peak in MiB.
func sampleRSS(ctx context.Context, pid int) func() float64 {
	done := make(chan struct{})
	var peak float64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := rssMiB(ctx, pid); err == nil {
				peak = max(peak, v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		wg.Wait()
		return peak
	}
}
