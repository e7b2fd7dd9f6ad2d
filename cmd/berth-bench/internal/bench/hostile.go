package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/shirou/gopsutil/v4/process"
)

// hostileHeadroom is the address space the broker may map past what it
// maps at start, during the hostile figures (Linux): a regression kills
// the broker, not the machine.
const hostileHeadroom = 2 << 30

// hostileLoad is one hostile input kept running while another project's
// initialize is measured: setup prepares it, run repeats it until ctx ends.
type hostileLoad struct {
	name  string
	label string
	setup func(ctx context.Context, r *runner, b *broker) (run func(ctx context.Context) error, err error)
}

var hostileLoads = []hostileLoad{
	{name: "none", label: "nothing else running", setup: func(context.Context, *runner, *broker) (func(context.Context) error, error) {
		return nil, nil
	}},
	{name: "index-save", label: "a large project's index rebuilt and saved, over and over", setup: indexSaves},
	{name: "batch", label: "JSON-RPC batches of 32 reads of a 1 MB standards file, back to back", setup: batches},
	{name: "flood", label: "a hosted server flooding a session that never reads its GET stream", setup: flood},
	{name: "nested-config", label: "attaches of a project whose config is 200 KB of nested brackets", setup: nestedConfig},
}

// hostile measures another project's initialize while each hostile load
// runs on the same broker: --hostile-samples new sessions, each ended at
// once, and the broker's CPU time and peak RSS meanwhile.
func (r *runner) hostile(ctx context.Context) error {
	b, err := startBroker(ctx, r.bin, filepath.Join(r.tmp, "hostile-home"), 20)
	if err != nil {
		return err
	}
	defer b.stop()
	if r.o.Profile != "" {
		if err := os.MkdirAll(r.o.Profile, 0o755); err != nil {
			return err
		}
	}
	if err := limitAddressSpace(b.pid(), hostileHeadroom); err != nil {
		r.progress("hostile: the broker runs without an address-space limit: %v", err)
	}
	neighbour, err := makeProject(filepath.Join(r.tmp, "hostile"), "neighbour", 10, 7)
	if err != nil {
		return err
	}
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: neighbour, Kind: api.HolderCLI})
	if err != nil {
		return fmt.Errorf("attach the measured project: %w", err)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	for _, l := range hostileLoads {
		if len(r.o.HostileLoads) > 0 && !slices.Contains(r.o.HostileLoads, l.name) {
			continue
		}
		r.progress("hostile: %s", l.label)
		if err := r.hostileFigure(ctx, b, hc, resp.URL, l); err != nil {
			r.rs.skip("hostile", l.name, err.Error(), "init-p99")
			r.progress("hostile: %s: %v", l.name, err)
		}
		if !api.ProcessAlive(b.pid()) {
			return fmt.Errorf("the broker died during %s (log: %s)", l.name, filepath.Join(b.home, "serve.stderr"))
		}
	}
	return nil
}

func (r *runner) hostileFigure(ctx context.Context, b *broker, hc *http.Client, url string, l hostileLoad) error {
	run, err := l.setup(ctx, r, b)
	if err != nil {
		return err
	}
	proc, err := process.NewProcessWithContext(ctx, int32(b.pid()))
	if err != nil {
		return err
	}
	cpu0, err := proc.TimesWithContext(ctx)
	if err != nil {
		return err
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var loadErr error
	var wg sync.WaitGroup
	if run != nil {
		wg.Go(func() {
			for loadCtx.Err() == nil {
				if err := run(loadCtx); err != nil && loadCtx.Err() == nil {
					loadErr = err
					return
				}
			}
		})
		time.Sleep(time.Second) // under way before the first sample
	}
	stopRSS := sampleRSS(ctx, b.pid())
	var profWG sync.WaitGroup
	if r.o.Profile != "" {
		// The broker's CPU profile and execution trace of the first seconds.
		profWG.Go(func() {
			for _, p := range []struct{ name, file string }{{"profile?seconds=3", "cpu.pprof"}, {"trace?seconds=3", "trace"}} {
				if err := b.profile(ctx, p.name, filepath.Join(r.o.Profile, "hostile-"+l.name+"-"+p.file)); err != nil {
					r.progress("hostile: profile %s: %v", l.name, err)
				}
			}
		})
	}
	var lat []time.Duration
	var sampleErr error
	for range r.o.HostileSamples {
		d, err := initializeOnce(ctx, hc, url)
		if err != nil {
			sampleErr = err
			break
		}
		lat = append(lat, d)
		time.Sleep(10 * time.Millisecond)
	}
	peak := stopRSS()
	profWG.Wait()
	cpu1, _ := proc.TimesWithContext(ctx)
	stopLoad()
	wg.Wait()
	switch {
	case sampleErr != nil:
		return fmt.Errorf("initialize of another project: %w", sampleErr)
	case loadErr != nil:
		return fmt.Errorf("the load: %w", loadErr)
	}
	r.rs.add("hostile", l.name, "init-p50", ms(percentile(lat, 50)), "ms", len(lat))
	r.rs.add("hostile", l.name, "init-p99", ms(percentile(lat, 99)), "ms", len(lat))
	r.rs.add("hostile", l.name, "init-max", ms(percentile(lat, 100)), "ms", len(lat))
	if cpu1 != nil {
		r.rs.add("hostile", l.name, "broker-cpu", cpu1.User+cpu1.System-cpu0.User-cpu0.System, "s", len(lat))
	}
	r.rs.add("hostile", l.name, "rss-peak", peak, "MiB", len(lat))
	return nil
}

// initializeOnce opens a session on url, timing its initialize, and ends it.
func initializeOnce(ctx context.Context, hc *http.Client, url string) (time.Duration, error) {
	s := &httpSession{hc: hc, url: url}
	start := time.Now()
	if _, err := s.post(ctx, initializeRequest(1), true); err != nil {
		return 0, err
	}
	took := time.Since(start)
	return took, s.close(ctx)
}

// indexSaves rewrites a project's standards (--hostile-files of them)
// and waits for its index to catch up, over and over: each round rebuilds
// and saves it.
func indexSaves(ctx context.Context, r *runner, b *broker) (func(context.Context) error, error) {
	files := r.o.HostileFiles
	root, err := makeProject(filepath.Join(r.tmp, "hostile"), "big", files, 11)
	if err != nil {
		return nil, err
	}
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		return nil, err
	}
	if err := waitIndexed(ctx, b.client, resp.ID, 5*time.Minute); err != nil {
		return nil, err
	}
	seed := uint64(12)
	return func(ctx context.Context) error {
		seed++
		if err := writeStandards(root, files, seed); err != nil {
			return err
		}
		time.Sleep(time.Second) // the watcher's debounce
		if err := waitIndexed(ctx, b.client, resp.ID, 5*time.Minute); err != nil && ctx.Err() == nil {
			return err
		}
		return nil
	}, nil
}

// batches posts JSON-RPC batches of 32 reads of a 1 MB standards file.
func batches(ctx context.Context, r *runner, b *broker) (func(context.Context) error, error) {
	root := filepath.Join(r.tmp, "hostile", "batch")
	file := filepath.Join(root, api.ProjectDir, "standards", "big.md")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("# A long standard\n\n")
	for i := 0; sb.Len() < 1_000_000; i++ {
		fmt.Fprintf(&sb, "Paragraph %d says what the team agreed on, in a sentence or two of plain words.\n\n", i)
	}
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		return nil, err
	}
	root, _ = filepath.EvalSymlinks(root)
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		return nil, err
	}
	if err := waitIndexed(ctx, b.client, resp.ID, time.Minute); err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: time.Minute}
	s := &httpSession{hc: hc, url: resp.URL}
	if _, err := s.post(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"berth-bench","version":"1"}}}`), true); err != nil {
		return nil, err
	}
	if _, err := s.post(ctx, initializedNote, false); err != nil {
		return nil, err
	}
	next := 10
	return func(ctx context.Context) error {
		reads := make([]string, 32)
		for i := range reads {
			next++
			reads[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"file://%s"}}`, next, file)
		}
		// The whole answer is read, as fast as it comes.
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader("["+strings.Join(reads, ",")+"]"))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", s.session)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && (resp.StatusCode != http.StatusOK || n < 1<<20) {
			err = fmt.Errorf("the batch's answer: HTTP %d, %d bytes", resp.StatusCode, n)
		}
		return err
	}, nil
}

// flood makes a hosted server (cmd/berth/systest/testdata/floodserver,
// built from the source tree) send 2,000 resource updates and 2,000 log
// messages of 8 KiB, over and over, to a session that never reads its GET
// stream.
func flood(ctx context.Context, r *runner, b *broker) (func(context.Context) error, error) {
	if r.src == "" {
		return nil, errors.New("needs the source tree (the flood server is built from it)")
	}
	bin := filepath.Join(r.tmp, "floodserver")
	if err := goBuild(ctx, r.src, r.tmp, nil, "./cmd/berth/systest/testdata/floodserver"); err != nil {
		return nil, err
	}
	root := filepath.Join(r.tmp, "hostile", "flood")
	if err := os.MkdirAll(filepath.Join(root, api.ProjectDir), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte("servers:\n  flood:\n    command: "+bin+"\n    start: eager\n"), 0o644); err != nil {
		return nil, err
	}
	root, _ = filepath.EvalSymlinks(root)
	resp, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
	if err != nil {
		return nil, err
	}
	if _, err := b.client.ApproveServers(ctx, api.ApproveRequest{Root: root}); err != nil {
		return nil, err
	}
	for running := false; !running; {
		list, err := b.client.Servers(ctx, root)
		if err != nil {
			return nil, err
		}
		running = len(list.Projects) == 1 && len(list.Projects[0].Servers) == 1 && list.Projects[0].Servers[0].State == api.ServerRunning
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	hc := &http.Client{Timeout: 2 * time.Minute}
	slow, err := openHTTPSession(ctx, hc, resp.URL)
	if err != nil {
		return nil, err
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"flood://updates"}}`,
	} {
		rep, err := slow.post(ctx, []byte(body), true)
		if err == nil {
			err = rep.check()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", body, err)
		}
	}
	// Its GET stream, opened and never read.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, resp.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", slow.session)
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	stream, err := (&http.Client{}).Do(req)
	if err != nil {
		return nil, err
	}
	r.cleanup = append(r.cleanup, func() { stream.Body.Close() })
	caller, err := openHTTPSession(ctx, hc, resp.URL)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		return caller.callWith(ctx, "flood__flood", `{"count": 2000, "pad": 8192}`)
	}, nil
}

// nestedConfig attaches, over and over, a project whose config.yaml is
// 200 KB of nested brackets (refused each time).
func nestedConfig(ctx context.Context, r *runner, b *broker) (func(context.Context) error, error) {
	root := filepath.Join(r.tmp, "hostile", "nested")
	if err := os.MkdirAll(filepath.Join(root, api.ProjectDir), 0o755); err != nil {
		return nil, err
	}
	body := "servers: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	if err := os.WriteFile(filepath.Join(root, api.ProjectDir, "config.yaml"), []byte(body), 0o644); err != nil {
		return nil, err
	}
	root, _ = filepath.EvalSymlinks(root)
	return func(ctx context.Context) error {
		_, err := b.client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderCLI})
		if !errors.Is(err, api.CodeBadConfig) {
			return fmt.Errorf("attach of the nested config: %v, want a refusal", err)
		}
		return nil
	}, nil
}

// hostileRows are the table's lines of the hostile figures.
func hostileRows() []row {
	var out []row
	for _, l := range hostileLoads {
		out = append(out,
			row{label: "another project's initialize p99, " + l.label, bench: "hostile", metric: "init-p99", berthSubject: l.name, optional: true,
				target: "< 50 ms", met: func(rs *results) (bool, bool) {
					v, ok := rs.get("hostile", l.name, "init-p99")
					return ok && v.Value < 50, ok
				}},
			row{label: "  its max", bench: "hostile", metric: "init-max", berthSubject: l.name, optional: true},
			row{label: "  the broker's CPU meanwhile", bench: "hostile", metric: "broker-cpu", berthSubject: l.name, optional: true},
			row{label: "  the broker's peak RSS meanwhile", bench: "hostile", metric: "rss-peak", berthSubject: l.name, optional: true},
		)
	}
	return out
}
