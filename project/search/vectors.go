package search

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/berth-dev/berth/store"
)

// Embedder turns texts into vectors: the user's embedding server, when the
// broker's config names one (search.embeddings). Nothing of a project's
// own config can set it: a cloned repository must not send its documents
// anywhere.
type Embedder interface {
	// Model names the model; stored vectors are keyed by it.
	Model() string
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Embedding limits.
const (
	// embedBatch is how many sections go to the embedder in one request.
	embedBatch = 32
	// maxEmbedText cuts each section's text sent to the embedder.
	maxEmbedText = 8 << 10
	// embedTimeout bounds one batch request; queryEmbedTimeout the query's,
	// past which a search answers with BM25F alone.
	embedTimeout      = time.Minute
	queryEmbedTimeout = 2 * time.Second
	// embedRetry is how long after a failed batch the embedder is tried
	// again.
	embedRetry = time.Minute
	// bucketVectors holds stored vectors, in the index area: key, the
	// first 16 bytes of SHA-256(model NUL text); value, the dimension then
	// the float32s, little endian.
	bucketVectors = "vectors"
)

// RetrievalVector is [Result.RetrievalMethod] when the embedder's ranking
// was fused with BM25F's.
const RetrievalVector = "bm25f+vector"

// vectors are the embeddings of the current sections. The embedding loop
// writes them; searches read them.
type vectors struct {
	mu      sync.RWMutex // guards the fields below
	byChunk map[*chunk][]float32
	lastErr string
	kick    chan struct{} // a send asks the loop to embed what is missing
}

// vectorKey is the stored key of a section's vector.
func vectorKey(model, text string) []byte {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(text))
	return h.Sum(nil)[:16]
}

func encodeVector(v []float32) []byte {
	var e enc
	e.uvarint(uint64(len(v)))
	for _, x := range v {
		e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(x))
	}
	return e.seal()
}

func decodeVector(b []byte) ([]float32, error) {
	d := open(b)
	n := d.count(4)
	raw := d.raw(4 * n)
	if err := d.done(); err != nil {
		return nil, err
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v, nil
}

// normalize scales v to unit length in place (cosine becomes a dot
// product); it reports false for a zero or non-finite vector.
func normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// embedText is what is embedded of a section: its heading path and text.
func embedText(c *chunk) string {
	return cutUTF8(c.section()+"\n"+c.text[c.bodyStart:], maxEmbedText)
}

// kickEmbedder asks the embedding loop to look for sections without a
// vector; it never blocks.
func (ix *Index) kickEmbedder() {
	if ix.opts.Embedder == nil {
		return
	}
	select {
	case ix.vec.kick <- struct{}{}:
	default:
	}
}

// embedLoop embeds the sections that have no vector whenever it is kicked,
// until ctx ends. It is the only writer of ix.vec.byChunk.
func (ix *Index) embedLoop(ctx context.Context) {
	retry := time.NewTimer(0)
	defer retry.Stop()
	<-retry.C
	for {
		select {
		case <-ctx.Done():
			return
		case <-ix.vec.kick:
		case <-retry.C:
		}
		if err := ix.embedMissing(ctx); err != nil && ctx.Err() == nil {
			ix.log.Warn("search: embedding server failed; searches use BM25F alone until it answers", "err", err)
			ix.vec.mu.Lock()
			ix.vec.lastErr = err.Error()
			ix.vec.mu.Unlock()
			retry.Reset(embedRetry)
		}
	}
}

// embedMissing gives every live section of the current snapshot a vector:
// from the store when its text was embedded before (by this model), else
// from the embedder, batch by batch, storing each batch.
func (ix *Index) embedMissing(ctx context.Context) error {
	s := ix.snap.Load()
	em := ix.opts.Embedder
	model := em.Model()
	ix.vec.mu.Lock()
	live := make(map[*chunk]bool, s.live)
	var missing []*chunk
	for _, c := range s.chunks {
		if c == nil {
			continue
		}
		live[c] = true
		if _, ok := ix.vec.byChunk[c]; !ok {
			missing = append(missing, c)
		}
	}
	for c := range ix.vec.byChunk {
		if !live[c] {
			delete(ix.vec.byChunk, c)
		}
	}
	ix.vec.mu.Unlock()
	for len(missing) > 0 {
		batch := missing[:min(embedBatch, len(missing))]
		missing = missing[len(batch):]
		keys := make([][]byte, len(batch))
		texts := make([]string, len(batch))
		found := make([][]float32, len(batch))
		loaded, read := ix.withTexts(batch)
		for i, c := range loaded {
			if read[i] { // else replaced since s, or damaged
				texts[i] = embedText(c)
				keys[i] = vectorKey(model, texts[i])
			}
		}
		if err := ix.area.View(func(b *store.Bucket) error {
			vb := b.Bucket(bucketVectors)
			for i, k := range keys {
				if k == nil {
					continue
				}
				if raw := vb.Get(k); raw != nil {
					found[i], _ = decodeVector(raw) // a damaged one is embedded again
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("read stored vectors: %w", err)
		}
		var ask []int
		for i := range batch {
			if found[i] == nil && read[i] {
				ask = append(ask, i)
			}
		}
		if len(ask) > 0 {
			in := make([]string, len(ask))
			for j, i := range ask {
				in[j] = texts[i]
			}
			bctx, cancel := context.WithTimeout(ctx, embedTimeout)
			out, err := em.Embed(bctx, in)
			cancel()
			if err != nil {
				return err
			}
			if len(out) != len(in) {
				return fmt.Errorf("embedding server returned %d vectors for %d texts", len(out), len(in))
			}
			if err := ix.area.Update(func(b *store.Bucket) error {
				vb, err := b.CreateBucket(bucketVectors)
				if err != nil {
					return err
				}
				for j, i := range ask {
					found[i] = out[j]
					if err := vb.Put(keys[i], encodeVector(out[j])); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return fmt.Errorf("store vectors: %w", err)
			}
		}
		ix.vec.mu.Lock()
		for i, c := range batch {
			if v := found[i]; v != nil && normalize(v) {
				ix.vec.byChunk[c] = v
			}
		}
		ix.vec.lastErr = ""
		ix.vec.mu.Unlock()
	}
	return nil
}

// vectorRanking ranks by cosine similarity to q the sections with a vector
// that pass p's filters, best first, at most depth of them.
func (ix *Index) vectorRanking(ctx context.Context, s *snapshot, p *plan, q []float32, depth int) ([]candidate, error) {
	ix.vec.mu.RLock()
	defer ix.vec.mu.RUnlock()
	var cands []candidate
	for id, c := range s.chunks {
		if c == nil || !p.admits(c) {
			continue
		}
		v := ix.vec.byChunk[c]
		if len(v) != len(q) {
			continue
		}
		if id%checkEvery == 0 && ix.interrupted(ctx) {
			return nil, ctx.Err()
		}
		if dot := dotProduct(v, q); dot > 0 {
			cands = append(cands, candidate{id: uint32(id), score: dot})
		}
	}
	return topN(s, cands, depth), nil
}

// queryVectors embeds the phrasings of a search, or returns nil (BM25F
// alone) when there is no embedder, no section has a vector yet, or the
// embedder fails or is slow.
func (ix *Index) queryVectors(ctx context.Context, plans []*plan) [][]float32 {
	if ix.opts.Embedder == nil {
		return nil
	}
	ix.vec.mu.RLock()
	none := len(ix.vec.byChunk) == 0
	ix.vec.mu.RUnlock()
	if none {
		return nil
	}
	texts := make([]string, len(plans))
	for i, p := range plans {
		texts[i] = p.text
	}
	qctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	out, err := ix.opts.Embedder.Embed(qctx, texts)
	if err != nil || len(out) != len(texts) {
		if ctx.Err() == nil {
			ix.log.Debug("search: query not embedded; BM25F alone", "err", err)
		}
		return nil
	}
	for _, v := range out {
		if !normalize(v) {
			return nil
		}
	}
	return out
}

// dotProduct is the dot product of two vectors of one length, in four
// running sums (twice as fast as one: the additions do not wait on each
// other).
func dotProduct(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
