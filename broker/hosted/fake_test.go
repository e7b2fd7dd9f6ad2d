package hosted

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as the programs these tests run: with
// BERTH_HOSTED_HELPER=server it is a small MCP server on stdio (the "fake"
// upstream); with =pool it is a stand-in broker that hosts one server and
// waits to be killed.
func TestMain(m *testing.M) {
	switch os.Getenv("BERTH_HOSTED_HELPER") {
	case "server":
		runFakeServer()
		return
	case "pool":
		runPoolHelper()
		return
	case "counted":
		runCounted()
		return
	}
	os.Exit(m.Run())
}

// fakeCommand declares the fake server: this test binary in server mode.
func fakeCommand(t testing.TB) (string, map[string]string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, map[string]string{"BERTH_HOSTED_HELPER": "server"}
}

type textIn struct {
	Text string `json:"text"`
}
type msIn struct {
	MS int `json:"ms"`
}
type empty struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func runFakeServer() {
	if ms, err := strconv.Atoi(os.Getenv("FAKE_START_DELAY_MS")); err == nil {
		time.Sleep(time.Duration(ms) * time.Millisecond) // a slow start: Node under load
	}
	fmt.Fprintln(os.Stderr, "fake server ready")
	var opts *mcp.ServerOptions
	register := func(*mcp.Server) {}
	if os.Getenv("FAKE_SUBSCRIBE") != "" {
		opts, register = fakeSubscriptions()
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, opts)
	register(srv)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "pid"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text(strconv.Itoa(os.Getpid())), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sleep"}, func(ctx context.Context, _ *mcp.CallToolRequest, in msIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
			return text("slept"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	// block waits until the call is cancelled and records that it was.
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "blocking")
		<-ctx.Done()
		if err := os.WriteFile(in.Text, []byte("cancelled"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mark:", err)
		}
		return nil, nil, ctx.Err()
	})
	// log sends text as a notifications/message of the server.
	mcp.AddTool(srv, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "fakelog", Data: in.Text}); err != nil {
			return nil, nil, err
		}
		return text("logged"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "exit"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "dying on request")
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_tool"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(srv, &mcp.Tool{Name: "extra"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text("extra"), nil, nil
		})
		return text("added"), nil, nil
	})
	// ask asks the client for input inside the call (MCP 2026-07-28 input requests).
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: in.Text,
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}}}}, nil, nil
		}
		return text(fmt.Sprintf("%s:%v", resp.Action, resp.Content["answer"])), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		if res, ok := req.Params.InputResponses["r"].(*mcp.ListRootsResult); ok {
			var s string
			for _, r := range res.Roots {
				s += r.URI + "\n"
			}
			return text(s), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}}, nil, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "fake://readme", Name: "readme", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "fake readme"}}}, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
	if os.Getenv("FAKE_LINGER") != "" {
		select {} // ignores stdin EOF: only a signal ends it
	}
}

// runPoolHelper hosts the fake server (BERTH_HOSTED_COMMAND), prints its
// pid on stdout and waits to be killed. On Linux the server ignores stdin
// EOF, so only the parent-death signal can end it.
func runPoolHelper() {
	exe, env := os.Getenv("BERTH_HOSTED_COMMAND"), map[string]string{"BERTH_HOSTED_HELPER": "server"}
	if runtime.GOOS == "linux" {
		env["FAKE_LINGER"] = "1"
	}
	pool := NewPool(Options{})
	hp, err := pool.Open(context.Background(), ProjectSpec{ID: "p", Name: "p", Root: os.TempDir()},
		[]Decl{{Name: "fake", Origin: OriginUser, Server: validServer(exe, nil, env)}})
	if err != nil {
		log.Fatal(err)
	}
	hp.ensure(context.Background(), "", time.Minute)
	st := hp.Status()
	if len(st) != 1 || st[0].PID == 0 {
		log.Fatalf("server did not start: %+v", st)
	}
	fmt.Println(st[0].PID)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
}
