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
		if !errors.Is(err, shim.ErrHelp) && !interactive(os.Stdin) {
			// An IDE started it: its initialize gets the reason too.
			shim.Refuse(ctx, os.Stdin, os.Stdout, err)
		}
		return code
	}
	if err := shim.Main(ctx, opts); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "berth-shim: %v\n", err)
		return 1
	}
	return 0
}

// interactive reports whether f is a terminal: a person ran the shim.
func interactive(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
