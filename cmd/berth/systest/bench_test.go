package systest

import (
	"context"
	"os"
	"testing"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkControlHealth is the baseline: one request over the control socket.
func BenchmarkControlHealth(b *testing.B) {
	br := brokertest.StartBroker(b, brokertest.Options{})
	ctx := context.Background()
	for b.Loop() {
		if _, err := br.Client.Health(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmAttach is a shim's attach (and detach) of a project that is
// already mounted: compare with BenchmarkControlHealth. "same" is a window
// joining one like it (the state file does not change); "flips" is a dual
// window joining a pinned project (the broker rewrites the state file to
// dual on the attach and back to http on the detach).
func BenchmarkWarmAttach(b *testing.B) {
	for _, tc := range []struct {
		name string
		held api.AttachRequest
	}{
		{"same", api.AttachRequest{Kind: api.HolderShim, PID: os.Getpid(), Transport: api.TransportDual}},
		{"flips", api.AttachRequest{Kind: api.HolderCLI}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			br := brokertest.StartBroker(b, brokertest.Options{})
			root := brokertest.Project(b, "warm", nil)
			ctx := context.Background()
			tc.held.Root = root // held for the whole run: keeps it mounted
			if _, err := br.Client.Attach(ctx, tc.held); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				resp, err := br.Client.Attach(ctx, api.AttachRequest{Root: root, Kind: api.HolderShim, PID: os.Getpid()})
				if err != nil {
					b.Fatal(err)
				}
				if err := br.Client.Detach(ctx, resp.ID, resp.Lease); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolCallHTTP is one get_server_info over streamable HTTP.
func BenchmarkToolCallHTTP(b *testing.B) {
	br := brokertest.StartBroker(b, brokertest.Options{})
	resp := br.Attach(b, brokertest.Project(b, "http", nil))
	ctx := context.Background()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: resp.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "current_date", Arguments: map[string]any{}}); err != nil {
			b.Fatal(err)
		}
	}
}
