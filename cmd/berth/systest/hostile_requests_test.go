//go:build linux

package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/streamable"
	"github.com/berth-dev/berth/project/budgettest"
)

// Hostile requests to a project's endpoint.
var _ = addHostile(
	batchOfReads(2000, func(t *testing.T, a *mcpAnswer) {
		if a.StatusCode != http.StatusBadRequest || !strings.Contains(string(a.Body), "a batch of 2000 messages, over the 32 one POST may hold") {
			t.Fatalf("%s %.300s", a.Status, a.Body)
		}
	}),
	batchOfReads(streamable.MaxBatch, func(t *testing.T, a *mcpAnswer) {
		if a.StatusCode != http.StatusOK {
			t.Fatalf("%s %.300s", a.Status, a.Body)
		}
		whole, left, results := 0, 0, 0
		for _, m := range sseMessages(a.Body) {
			var msg struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(m, &msg); err != nil {
				t.Fatal(err)
			}
			switch {
			case msg.Result != nil:
				whole++
				results += len(m)
			case msg.Error != nil && msg.Error.Code == streamable.CodeLimit:
				left++
			default:
				t.Fatalf("answer %.300s", m)
			}
		}
		if whole+left != streamable.MaxBatch || left == 0 || results > streamable.MaxBatchAnswer {
			t.Fatalf("%d answers whole (%d bytes), %d left out", whole, results, left)
		}
	}),
)

// batchOfReads is an entry that reads a 1 MB standards file n times in
// one JSON-RPC batch, at the protocol version that allows batches, and
// checks the answer with check.
func batchOfReads(n int, check func(t *testing.T, a *mcpAnswer)) hostileCase {
	var s *rawSession
	var uri string
	return hostileCase{
		name:   fmt.Sprintf("a batch of %d reads of a 1 MB standards file", n),
		budget: budgettest.Request,
		files: func() map[string]string {
			return map[string]string{".praxis-os/standards/big.md": bigStandard(1_000_000)}
		},
		prepare: func(t *testing.T, p *hostileProject) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			resp := p.MustAttach(ctx, t)
			p.WaitIndexed(ctx, t)
			s = p.RawSession(t, resp.Port, "2025-03-26")
			uri = "file://" + filepath.Join(p.Root, ".praxis-os", "standards", "big.md")
		},
		run: func(_ context.Context, t *testing.T, _ *hostileProject) {
			reads := make([]string, n)
			for i := range reads {
				reads[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`, 100+i, uri)
			}
			a, err := s.Post("[" + strings.Join(reads, ",") + "]")
			if err != nil {
				t.Fatal(err)
			}
			check(t, a)
		},
	}
}

// bigStandard is a markdown file of about size bytes: a heading and short
// paragraphs.
func bigStandard(size int) string {
	var b strings.Builder
	b.WriteString("# A long standard\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Paragraph %d says what the team agreed on, in a sentence or two of plain words.\n\n", i)
	}
	return b.String()
}
