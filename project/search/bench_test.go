package search

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/project/watch"
	"github.com/berth-dev/berth/store"
)

// Engine benchmarks: this index vs bleve v2 vs a naive scan, on the same
// generated corpus. The 10k-file corpus runs only with -large:
//
//	go test ./project/search -run '^$' -bench Engines -benchtime 1x -args -large
//
// -files N runs them on one corpus of N files instead (berth-bench uses it).
var (
	benchLarge = flag.Bool("large", false, "also run the engine benchmarks on the 10k-file corpus")
	benchFiles = flag.Int("files", 0, "run the engine benchmarks on one corpus of this many files only")
	benchSlow  = flag.Int("slowest", 0, "log each engine's this many slowest queries of the timed rounds")
)

const (
	corpusSeed = 42
	querySeed  = 7
	// timedRounds is how often each engine runs the query set (50
	// queries) once warm: 10,000 timed queries, so that the p99 is the
	// 100th slowest, not a handful of stalls.
	timedRounds = 200
)

// benchEngine is one search engine under comparison.
type benchEngine interface {
	build(tb testing.TB, root, dir string)
	reopen(tb testing.TB) (filesRead int64)
	search(tb testing.TB, q string) int
	size() int64
	close()
}

// BenchmarkEngines builds, reopens and queries each engine on a generated
// corpus, one engine after the other, then times Berth's and bleve's
// queries again in turn (the in-turn sub-benchmark, measureInTurn).
func BenchmarkEngines(b *testing.B) {
	sizes := []int{1000}
	if *benchLarge {
		sizes = append(sizes, 10000)
	}
	if *benchFiles > 0 {
		sizes = []int{*benchFiles}
	}
	queries := querySet(querySeed)
	for _, n := range sizes {
		root := b.TempDir()
		bytes := writeCorpus(b, root, n, corpusSeed)
		b.Logf("corpus: %d files, %.1f MB, %d queries", n, float64(bytes)/(1<<20), len(queries))
		b.Run(corpusName(n), func(b *testing.B) {
			// Berth's and bleve's indexes stay open after their own runs
			// for the in-turn run after them.
			kept := map[string]benchEngine{}
			defer func() {
				for _, e := range kept {
					e.close()
				}
			}()
			for _, e := range []struct {
				name string
				new  func() benchEngine
				reps int // query repetitions
				qs   []string
			}{
				{"berth", func() benchEngine { return &berthEngine{} }, timedRounds, queries},
				{"bleve", func() benchEngine { return &bleveEngine{} }, timedRounds, queries},
				{"bleve-fields", func() benchEngine { return &bleveEngine{fields: true} }, timedRounds, queries},
				{"naive", func() benchEngine { return &naiveEngine{} }, 1, queries[:min(len(queries), 10000/n*10)]},
			} {
				b.Run(e.name, func(b *testing.B) {
					for i := range b.N {
						en := e.new()
						measure(b, en, root, e.qs, e.reps)
						if _, inTurn := inTurnEngines[e.name]; inTurn && i == b.N-1 {
							kept[e.name] = en
						} else {
							en.close()
						}
					}
				})
			}
			if len(kept) == len(inTurnEngines) {
				b.Run("in-turn", func(b *testing.B) {
					for range b.N {
						measureInTurn(b, kept, queries)
					}
				})
			}
		})
	}
}

// corpusName is "1k", "10k", or the file count when it is not whole thousands.
func corpusName(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// measure builds, reopens and queries one engine and reports the figures;
// the caller closes the engine.
func measure(b *testing.B, e benchEngine, root string, queries []string, reps int) {
	dir := b.TempDir()
	runtime.GC()
	base := heapLive()
	stop := sampleHeap()
	start := time.Now()
	e.build(b, root, dir)
	build := time.Since(start)
	peak := stop() - base
	runtime.GC()
	runtime.GC() // twice: sync.Pool caches (bbolt's page pool) survive one
	live := heapLive() - base

	start = time.Now()
	read := e.reopen(b)
	reopen := time.Since(start)
	if s, ok := e.(interface{ settle() }); ok {
		s.settle()
	}

	for _, q := range queries { // warm up
		e.search(b, q)
	}
	var lat []time.Duration
	for range reps {
		for _, q := range queries {
			t := time.Now()
			e.search(b, q)
			lat = append(lat, time.Since(t))
		}
	}
	logSlowest(b, queries, lat, *benchSlow)
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]

	b.ReportMetric(ms(build), "build-ms")
	b.ReportMetric(ms(reopen), "reopen-ms")
	b.ReportMetric(float64(read), "reopen-files-read")
	b.ReportMetric(float64(e.size())/(1<<20), "index-MB")
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "query-p50-us")
	b.ReportMetric(float64(p99.Nanoseconds())/1e3, "query-p99-us")
	b.ReportMetric(float64(peak)/(1<<20), "heap-peak-MB")
	b.ReportMetric(float64(live)/(1<<20), "heap-live-MB")
	if be, ok := e.(*berthEngine); ok {
		p50, worst := be.editLatency(b, root)
		b.ReportMetric(ms(p50), "edit-p50-ms")
		b.ReportMetric(ms(worst), "edit-max-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// inTurnEngines are the engines whose queries measureInTurn times in turn.
var inTurnEngines = map[string]struct{}{"berth": {}, "bleve": {}}

// measureInTurn times the query set on each engine in turn, round by round
// (which goes first changing from round to round), timedRounds rounds
// after one to warm up, and reports each engine's p50 and p99 as
// <engine>-query-p50-us and <engine>-query-p99-us: the same minutes'
// noise falls on both, where the engines' own runs, one after the other,
// each meet the machine as it is then. A round, not a query, is the turn:
// each engine's queries follow each other as in its own run, with the
// processor's caches holding its structures rather than the other's.
func measureInTurn(b *testing.B, engines map[string]benchEngine, queries []string) {
	names := slices.Sorted(maps.Keys(engines))
	lat := make([][]time.Duration, len(names))
	for rep := range timedRounds + 1 {
		for k := range names {
			r := (k + rep) % len(names)
			e := engines[names[r]]
			for _, q := range queries {
				t := time.Now()
				e.search(b, q)
				if rep > 0 {
					lat[r] = append(lat[r], time.Since(t))
				}
			}
		}
	}
	for i, name := range names {
		slices.Sort(lat[i])
		p50, p99 := lat[i][len(lat[i])/2], lat[i][min(len(lat[i])-1, len(lat[i])*99/100)]
		b.ReportMetric(float64(p50.Nanoseconds())/1e3, name+"-query-p50-us")
		b.ReportMetric(float64(p99.Nanoseconds())/1e3, name+"-query-p99-us")
	}
	b.ReportMetric(0, "ns/op")
}

// logSlowest logs the n slowest of the timed queries, lat[i] being the time
// of queries[i%len(queries)], and each one's median over its rounds.
func logSlowest(b *testing.B, queries []string, lat []time.Duration, n int) {
	if n <= 0 {
		return
	}
	idx := make([]int, len(lat))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int { return cmp.Compare(lat[y], lat[x]) })
	for _, i := range idx[:min(n, len(idx))] {
		q := queries[i%len(queries)]
		var own []time.Duration
		for j := i % len(queries); j < len(lat); j += len(queries) {
			own = append(own, lat[j])
		}
		slices.Sort(own)
		b.Logf("slow: %8.0f us  round %2d  (its median %6.0f us)  %q", float64(lat[i].Nanoseconds())/1e3, i/len(queries), float64(own[len(own)/2].Nanoseconds())/1e3, q)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// heapLive is the heap in use by objects, live or not yet collected.
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampleHeap samples heapLive every 5ms until the returned func is called,
// which returns the peak seen.
func sampleHeap() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapLive(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if h := heapLive(); h > peak.Load() {
			peak.Store(h)
		}
		return peak.Load()
	}
}

// dirSize sums the sizes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// berthEngine is this package's index over a bbolt store.
type berthEngine struct {
	db   *store.DB
	ix   *Index
	root string
}

func (e *berthEngine) open(tb testing.TB) {
	ix, err := Open(context.Background(), Options{Root: e.root, Sources: defaultSources, DB: e.db, ProjectID: "bench"})
	if err != nil {
		tb.Fatal(err)
	}
	if err := ix.WaitReady(context.Background()); err != nil {
		tb.Fatal(err)
	}
	e.ix = ix
}

func (e *berthEngine) build(tb testing.TB, root, dir string) {
	db, err := store.Open(filepath.Join(dir, "berth.db"), time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	e.db, e.root = db, root
	e.open(tb)
}

func (e *berthEngine) reopen(tb testing.TB) int64 {
	e.ix.Close()
	e.open(tb)
	return e.ix.Status().FilesRead
}

// settle waits for the reopened index's background work (reading its
// texts into memory, warmtexts.go): the searches timed after a reopen are
// those of an index reopened a moment before, not during its first 0.2 s.
func (e *berthEngine) settle() { <-e.ix.done }

func (e *berthEngine) search(tb testing.TB, q string) int {
	res, err := e.ix.Search(context.Background(), Query{Text: q, N: 5})
	if err != nil {
		tb.Fatalf("%q: %v", q, err)
	}
	return len(res.Results)
}

func (e *berthEngine) size() int64 { return e.db.Size() }

func (e *berthEngine) close() {
	e.ix.Close()
	e.db.Close()
}

// editLatency writes files through a real watcher and measures how long
// each takes to become searchable.
func (e *berthEngine) editLatency(tb testing.TB, root string) (p50, worst time.Duration) {
	w, err := watch.New(root, defaultSources, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// watch.New has set its watches when it returns; subscribed before the
	// first write, the index is told of every change.
	changes := w.Subscribe()
	go func() { defer close(done); Watch(ctx, e.ix, changes) }()
	defer func() { cancel(); <-done }()
	var lat []time.Duration
	for i := range 10 {
		token := fmt.Sprintf("zqedit%03dx", i)
		rel := fmt.Sprintf(".praxis-os/standards/s%03d/edited-%d.md", i, i%3) // creates, then edits
		writeFiles(tb, root, map[string]string{rel: "# Edited\n\nThe token " + token + " appears.\n"})
		start := time.Now()
		for e.search(tb, token) == 0 {
			if time.Since(start) > 5*time.Second {
				tb.Fatalf("edit %d not searchable after 5s", i)
			}
			time.Sleep(time.Millisecond)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)-1]
}

// naiveEngine keeps the chunks in memory and scans them all per query.
type naiveEngine struct {
	root   string
	chunks []*chunk
	files  int64
}

func (e *naiveEngine) build(tb testing.TB, root, _ string) {
	e.root = root
	e.chunks, e.files = nil, 0
	filepath.WalkDir(filepath.Join(root, ".praxis-os"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".md" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		e.files++
		rel, _ := filepath.Rel(root, p)
		e.chunks = append(e.chunks, mustChunks(tb, filepath.ToSlash(rel), string(data))...)
		return nil
	})
}

// reopen has nothing to open: the naive engine keeps no index, so it reads
// and chunks every file again.
func (e *naiveEngine) reopen(tb testing.TB) int64 {
	e.build(tb, e.root, "")
	return e.files
}

func (e *naiveEngine) search(tb testing.TB, q string) int {
	p, err := compile(Query{Text: q, N: 5})
	if err != nil {
		tb.Fatal(err)
	}
	an := newAnalyzer()
	rk := &defaultRanking
	counts := map[string]fieldCounts{}
	type hit struct {
		c      *chunk
		tf, ht []uint32
	}
	var hits []hit
	df := make([]int, len(p.terms))
	var totalBody, totalHead uint64
	for _, c := range e.chunks {
		tcs, bodyLen, headLen := an.chunkTerms(c, rk, counts)
		totalBody += uint64(bodyLen)
		totalHead += uint64(headLen)
		c.bodyLen, c.headLen = bodyLen, headLen
		var tf, ht []uint32
		for _, tc := range tcs {
			if i, ok := slices.BinarySearch(p.terms, tc.term); ok {
				if tf == nil {
					tf, ht = make([]uint32, len(p.terms)), make([]uint32, len(p.terms))
				}
				tf[i], ht[i] = uint32(tc.body), uint32(tc.head)
				df[i]++
			}
		}
		if tf != nil && containsPhrases(an, c.text, p.phrases) {
			hits = append(hits, hit{c, tf, ht})
		}
	}
	nc := float64(max(1, len(e.chunks)))
	avgBody, avgHead := max(1, float64(totalBody)/nc), max(1, float64(totalHead)/nc)
	k1, bb, bh := float64(rk.k1), float64(rk.bodyB), float64(rk.headB)
	scores := make([]float64, len(hits))
	for j, h := range hits {
		for i := range h.tf {
			if h.tf[i]+h.ht[i] == 0 {
				continue
			}
			idf := math.Log(1 + (nc-float64(df[i])+0.5)/(float64(df[i])+0.5))
			t := float64(h.tf[i])/(1-bb+bb*float64(h.c.bodyLen)/avgBody) +
				float64(rk.headWeight)*float64(h.ht[i])/(1-bh+bh*float64(h.c.headLen)/avgHead)
			scores[j] += idf * t * (k1 + 1) / (t + k1)
		}
	}
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpFloat(scores[b], scores[a]) })
	return min(5, len(order))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (e *naiveEngine) size() int64 { return 0 }
func (e *naiveEngine) close()      { e.chunks = nil }

// BenchmarkSearch is the per-query cost of this index on the 1k corpus.
func BenchmarkSearch(b *testing.B) {
	e, _ := builtCorpus(b, 1000)
	queries := querySet(querySeed)
	b.ResetTimer()
	for i := range b.N {
		e.search(b, queries[i%len(queries)])
	}
}

// BenchmarkApply is the cost of applying one edited file to the 1k index.
func BenchmarkApply(b *testing.B) {
	e, root := builtCorpus(b, 1000)
	rel := ".praxis-os/standards/s001/doc-00001.md"
	g := newCorpusGen(99)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		writeFiles(b, root, map[string]string{rel: g.file()})
		b.StartTimer()
		if err := e.ix.Apply(context.Background(), []string{rel}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReopen builds one corpus's index once, then reopens it unchanged
// -reopens times and reports the median and fastest reopen (Open until the
// index is ready to answer). -reopen-cpuprofile profiles the reopens alone.
//
//	go test ./project/search -run '^$' -bench Reopen -benchtime 1x -args -files 10000
func BenchmarkReopen(b *testing.B) {
	n := *benchFiles
	if n == 0 {
		n = 1000
	}
	e, _ := builtCorpus(b, n)
	b.Run(corpusName(n), func(b *testing.B) {
		for range b.N {
			var took []time.Duration
			cpu0 := cpuTime(b) // CPU time does not count what other processes of a loaded machine take
			stop := startReopenProfile(b)
			for range *benchReopens {
				start := time.Now()
				if read := e.reopen(b); read != 0 {
					b.Fatalf("reopen of an unchanged index read %d files", read)
				}
				took = append(took, time.Since(start))
			}
			stop()
			cpu := cpuTime(b) - cpu0
			slices.Sort(took)
			b.ReportMetric(ms(cpu)/float64(len(took)), "reopen-cpu-ms")
			b.ReportMetric(ms(took[len(took)/2]), "reopen-ms")
			b.ReportMetric(ms(took[0]), "reopen-min-ms")
			b.ReportMetric(0, "ns/op")
		}
	})
}

var (
	benchReopens       = flag.Int("reopens", 9, "reopens measured by BenchmarkReopen")
	benchReopenProfile = flag.String("reopen-cpuprofile", "", "write a CPU profile of BenchmarkReopen's reopens to this file")
)

// startReopenProfile starts the CPU profile -reopen-cpuprofile asks for and
// returns the func that stops it.
func startReopenProfile(tb testing.TB) func() {
	if *benchReopenProfile == "" {
		return func() {}
	}
	f, err := os.Create(*benchReopenProfile)
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// builtCorpus writes the generated corpus of n files and builds Berth's
// index of it; the index is closed when the benchmark ends.
func builtCorpus(b *testing.B, n int) (*berthEngine, string) {
	b.Helper()
	root := b.TempDir()
	writeCorpus(b, root, n, corpusSeed)
	e := &berthEngine{}
	e.build(b, root, b.TempDir())
	b.Cleanup(e.close)
	return e, root
}
