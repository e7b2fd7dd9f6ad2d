// Command berth-shim is what an IDE launches: MCP on stdin/stdout, forwarded
// to the project's endpoint on the Berth broker (started if absent).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/berth-dev/berth/shim"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts, code, err := shim.ParseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "berth-shim: %v\n", err)
		return code
	}
	if err := shim.Main(ctx, opts); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "berth-shim: %v\n", err)
		return 1
	}
	return 0
}
