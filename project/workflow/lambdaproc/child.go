package lambdaproc

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/berth-dev/berth/project/workflow/pylambda"
)

// RunIfChild runs the child and exits when this process was started as one
// (its first argument is ChildCommand). A test binary calls it first in
// TestMain, so that it can serve as the child of its own tests.
func RunIfChild() {
	if len(os.Args) > 1 && os.Args[1] == ChildCommand {
		os.Exit(Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
}

// Main is the child: `berth gate-lambda-child --memory BYTES --cpu SECONDS`.
// It limits itself, reads one batch from stdin and writes one outcome a
// line to stdout. It returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(ChildCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	memory := fs.Int64("memory", DefaultLimits.Memory, "bytes of memory beyond the start")
	cpu := fs.Int("cpu", int(DefaultLimits.CPU/time.Second), "seconds of CPU time")
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	if err := limitSelf(*memory, *cpu); err != nil {
		fmt.Fprintln(stderr, "limit the process:", err)
		return exitBadInput
	}
	var b pylambda.Batch
	if err := json.NewDecoder(io.LimitReader(stdin, maxInputBytes)).Decode(&b); err != nil {
		fmt.Fprintln(stderr, "read the batch:", err)
		return exitBadInput
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	err := b.Run(func(o pylambda.Outcome) error {
		if err := enc.Encode(o); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		fmt.Fprintln(stderr, "write an outcome:", err)
		return exitBadInput
	}
	return 0
}

// limitSelf applies the limits (see the package doc): the OS's where it
// has them (limits_*.go), the watchdog and the CPU warning everywhere.
func limitSelf(memory int64, cpuSeconds int) error {
	base := mappedBytes()
	if err := limitOS(memory, cpuSeconds); err != nil {
		return err
	}
	debug.SetMemoryLimit(base + memory)
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		fmt.Fprintln(os.Stderr, "cpu limit reached")
		os.Exit(exitCPU)
	}()
	go watch(base + memory)
	return nil
}

// watch exits once the runtime has mapped more than limit bytes.
func watch(limit int64) {
	t := time.NewTicker(2 * time.Millisecond)
	for range t.C {
		if mappedBytes() > limit {
			fmt.Fprintln(os.Stderr, "memory limit reached")
			os.Exit(exitMemory)
		}
	}
}

// mappedBytes is the memory the Go runtime has mapped from the OS.
func mappedBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
