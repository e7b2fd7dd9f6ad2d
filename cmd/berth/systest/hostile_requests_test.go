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

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
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

// Hosted servers whose url is Berth's own endpoint: refused, never dialled.
var _ = addHostile(
	selfServer("a hosted url naming its own project's port", "127.0.0.1", func(b *brokertest.Broker) int { return b.End }),
	selfServer("a hosted url naming another project port by name", "localhost", func(b *brokertest.Broker) int { return b.Start }),
)

// selfServer is an entry whose project declares (and its user approves) a
// url server at host:port(b), a port of the broker under test: the server
// fails at once with the fix, and the broker serves no tool of it.
func selfServer(name, host string, port func(b *brokertest.Broker) int) hostileCase {
	var url string
	return hostileCase{
		name:   name,
		budget: budgettest.Request,
		prepare: func(t *testing.T, p *hostileProject) {
			n := port(p.b)
			url = fmt.Sprintf("http://%s:%d/mcp", host, n)
			p.WriteFile(t, ".praxis-os/config.yaml", fmt.Sprintf("mcp:\n  http_port: %d\nservers:\n  self:\n    url: %s\n    start: eager\n", n, url))
		},
		run: func(ctx context.Context, t *testing.T, p *hostileProject) {
			p.MustAttach(ctx, t)
			if _, err := p.b.Client.ApproveServers(ctx, api.ApproveRequest{Root: p.Root}); err != nil {
				t.Fatal(err)
			}
			var st api.ServerStatus
			if !brokertest.Poll(20*time.Second, func() bool {
				list, err := p.b.Client.Servers(ctx, p.Root)
				if err != nil || len(list.Projects) != 1 || len(list.Projects[0].Servers) != 1 {
					return false
				}
				st = list.Projects[0].Servers[0]
				return st.State == api.ServerFailed
			}) {
				t.Fatalf("the server is not failed: %+v", st)
			}
			want := "servers.self.url " + url + " points at Berth itself"
			if !strings.Contains(st.LastError, want) || !strings.Contains(st.LastError, "Point url at another MCP server") || st.Restarts != 0 {
				t.Fatalf("status %+v, want %q", st, want)
			}
		},
	}
}
