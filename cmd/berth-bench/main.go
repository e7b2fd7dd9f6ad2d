// Command berth-bench measures Berth end to end against its peers, from
// the source tree: `go run ./cmd/berth-bench [load|e2e|hosted|hostile|scale|worktrees|all] [flags]`
// (docs/benchmarks.md). It is not part of the product: berth and
// berth-shim never link it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/berth-dev/berth/cmd/berth-bench/internal/bench"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o, err := bench.ParseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "berth-bench: %v\n", err)
		return 2
	}
	if err := bench.RunOptions(ctx, o); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "berth-bench: %v\n", err)
		return 1
	}
	return 0
}
