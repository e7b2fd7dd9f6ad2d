package main

import (
	"context"
	"io"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/cmd/berth/internal/notes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

// runExampleServer is `berth example-server [--dir DIR]`: the notes MCP
// server on stdio, a real server to host in a project's servers: map.
func runExampleServer(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("example-server", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "notes", "the folder the notes are kept in (relative to the working directory: a hosted server's is its project's root)")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	store, err := notes.Open(*dir)
	if err != nil {
		return err
	}
	srv, err := notes.Server(store, api.Version)
	if err != nil {
		return err
	}
	// stdout is the MCP channel: nothing else is written there.
	return srv.Run(ctx, &mcp.StdioTransport{})
}
