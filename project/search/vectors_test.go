package search

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/search/embeddings"
)

// conceptServer is an OpenAI-compatible embeddings server written for
// these tests: a text's vector counts its words by concept (words listed
// in concepts share a dimension; any other word gets one of its own by
// hash), so that "try again later" lies near "retry with backoff". It
// counts the texts it embedded and can fail or stall on demand.
type conceptServer struct {
	*httptest.Server
	mu    sync.Mutex
	texts []string
	fail  bool
	stall chan struct{} // when not nil, every request waits for it to close
	dims  int
}

var concepts = map[string]int{
	"retry": 0, "retries": 0, "backoff": 0, "again": 0, "later": 0, "try": 0,
	"deadline": 1, "timeout": 1, "timeouts": 1, "slow": 1, "wait": 1,
	"pool": 2, "pooled": 2, "connections": 2, "reuse": 2,
}

func newConceptServer(t *testing.T) *conceptServer {
	cs := &conceptServer{dims: 64}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "concepts" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		cs.mu.Lock()
		fail, stall := cs.fail, cs.stall
		cs.mu.Unlock()
		if stall != nil {
			select {
			case <-stall:
			case <-r.Context().Done():
				return
			}
		}
		if fail {
			http.Error(w, "model not loaded", http.StatusServiceUnavailable)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, text := range req.Input {
			v := make([]float32, cs.dims)
			for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
				d, ok := concepts[w]
				if !ok {
					h := fnv.New32a()
					h.Write([]byte(w))
					d = 3 + int(h.Sum32()%uint32(cs.dims-3))
				}
				v[d]++
			}
			data = append(data, item{i, v})
		}
		cs.mu.Lock()
		cs.texts = append(cs.texts, req.Input...)
		cs.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *conceptServer) embedded() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.texts)
}

func (cs *conceptServer) set(fail bool, stall chan struct{}) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.fail, cs.stall = fail, stall
}

// waitEmbedded waits until ix holds n vectors.
func waitEmbedded(t *testing.T, ix *Index, n int) {
	t.Helper()
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { return ix.Status().Embedded == n }) {
		t.Fatalf("status %+v: want %d sections embedded", ix.Status(), n)
	}
}

func openEmbedded(t *testing.T, root string, db any, srv *conceptServer) *Index {
	t.Helper()
	return openWith(t, Options{Root: root, Sources: defaultSources, DB: openDBFrom(t, db), ProjectID: "p",
		Embedder: embeddings.New(srv.URL, "concepts", srv.Client())})
}

func TestEmbeddingsAreFusedWithBM25(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, multiCorpus)
	srv := newConceptServer(t)
	ix := openEmbedded(t, root, nil, srv)
	waitEmbedded(t, ix, 3)
	// BM25F alone finds nothing for words no document holds.
	plain := openReady(t, openDB(t), "q", root)
	if res := search(t, plain, "try again later"); len(res.Results) != 0 || res.RetrievalMethod != RetrievalMethod {
		t.Fatalf("BM25F alone: %+v", res)
	}
	res := search(t, ix, "try again later")
	if res.RetrievalMethod != RetrievalVector || len(res.Results) == 0 || res.Results[0].File != ".praxis-os/standards/net/retries.md" {
		t.Fatalf("fused: %s %v", res.RetrievalMethod, files(res))
	}
	// A phrase that must appear is for BM25F alone.
	if res := search(t, ix, `"try again"`); res.RetrievalMethod != RetrievalMethod || len(res.Results) != 0 {
		t.Fatalf("phrase: %s %v", res.RetrievalMethod, files(res))
	}
}

func TestAnUnchangedSectionIsEmbeddedOnce(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, multiCorpus)
	srv := newConceptServer(t)
	db := openDB(t)
	ix := openEmbedded(t, root, db, srv)
	waitEmbedded(t, ix, 3)
	if got := srv.embedded(); got != 3 {
		t.Fatalf("embedded %d texts for 3 sections", got)
	}
	ix.Close()
	// Reopened on the same berth.db: the vectors are read back.
	ix = openEmbedded(t, root, db, srv)
	waitEmbedded(t, ix, 3)
	// One file edited: its section alone is embedded again.
	writeFiles(t, root, map[string]string{".praxis-os/standards/db/pool.md": "# Pool\n\nReuse pooled connections.\n"})
	if err := ix.Apply(context.Background(), []string{".praxis-os/standards/db/pool.md"}); err != nil {
		t.Fatal(err)
	}
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { return srv.embedded() == 4 && ix.Status().Embedded == 3 }) {
		t.Fatalf("embedded %d texts in all, status %+v: want the edited section's alone embedded again", srv.embedded(), ix.Status())
	}
	srv.mu.Lock()
	last := srv.texts[3]
	srv.mu.Unlock()
	if !strings.Contains(last, "Reuse pooled connections") {
		t.Fatalf("embedded again: %q", last)
	}
}

func TestEmbedderFailureLeavesBM25(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, multiCorpus)
	srv := newConceptServer(t)
	srv.set(true, nil)
	ix := openEmbedded(t, root, nil, srv)
	if !brokertest.Poll(brokertest.WaitLimit, func() bool { return ix.Status().EmbedError != "" }) {
		t.Fatalf("status %+v: want the server's failure", ix.Status())
	}
	if st := ix.Status(); !strings.Contains(st.EmbedError, "503") || st.Embedded != 0 {
		t.Fatalf("status %+v", st)
	}
	if res := search(t, ix, "retry"); res.RetrievalMethod != RetrievalMethod || !slices.Equal(files(res), []string{".praxis-os/standards/net/retries.md"}) {
		t.Fatalf("while the server fails: %s %v", res.RetrievalMethod, files(res))
	}
	// It answers again: the next change embeds everything.
	srv.set(false, nil)
	writeFiles(t, root, map[string]string{".praxis-os/standards/db/pool.md": "# Pool\n\nPooled.\n"})
	if err := ix.Apply(context.Background(), []string{".praxis-os/standards/db/pool.md"}); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, ix, 3)
	if st := ix.Status(); st.EmbedError != "" {
		t.Fatalf("status %+v: the error stays after the server recovered", st)
	}
	// A server that stalls on the query: BM25F answers once the query's
	// embedding time is up.
	stall := make(chan struct{})
	defer close(stall)
	srv.set(false, stall)
	start := time.Now()
	res := search(t, ix, "retry")
	if res.RetrievalMethod != RetrievalMethod || len(res.Results) != 1 {
		t.Fatalf("stalled server: %s %v", res.RetrievalMethod, files(res))
	}
	if took := time.Since(start); took > queryEmbedTimeout+5*time.Second {
		t.Fatalf("a stalled server held the search %v", took)
	}
}

func TestEmbeddingsClientRefusesBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"not JSON", "nope", 200},
		{"too few vectors", `{"data":[{"index":0,"embedding":[1]}]}`, 200},
		{"index twice", `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`, 200},
		{"dimensions differ", `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`, 200},
		{"error status", `{"error":"no such model"}`, 404},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			w.Write([]byte(tc.body))
		}))
		_, err := embeddings.New(srv.URL, "m", srv.Client()).Embed(context.Background(), []string{"a", "b"})
		srv.Close()
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
