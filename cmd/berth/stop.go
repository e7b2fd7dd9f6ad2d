package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/berth-dev/berth/api"
)

// stopWait bounds how long `berth stop` waits for the broker to exit.
const stopWait = 10 * time.Second

// runStop asks the running broker to stop over its control socket and waits
// until its process has exited.
func runStop(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageError{"takes no arguments"}
	}
	home, err := api.DefaultHome()
	if err != nil {
		return err
	}
	c := api.NewUnixClient(api.SocketPath(home))
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	h, err := c.Health(hctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "no broker is running in %s\n", home)
		return nil
	}
	if _, err := c.Shutdown(ctx, api.ShutdownRequest{Reason: "berth stop"}); err != nil {
		return fmt.Errorf("ask broker pid %d to stop: %w", h.PID, err)
	}
	prog := startProgress(fmt.Sprintf("waiting for broker pid %d to stop", h.PID))
	defer prog.end()
	deadline := time.Now().Add(stopWait)
	for time.Now().Before(deadline) {
		if !api.ProcessAlive(h.PID) {
			prog.end()
			fmt.Printf("broker stopped (pid %d)\n", h.PID)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("broker pid %d still runs %s after it was asked to stop: `kill %d` (then `berth doctor`)", h.PID, stopWait, h.PID)
}

// runVersion prints this program's module version, commit and protocol,
// and the running broker's.
func runVersion(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageError{"takes no arguments"}
	}
	fmt.Printf("berth %s (commit %s, protocol %d)\n", api.Version, api.Commit, api.Protocol())
	home, err := api.DefaultHome()
	if err != nil {
		return err
	}
	c := api.NewUnixClient(api.SocketPath(home))
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	h, err := c.Health(ctx)
	if err != nil {
		fmt.Printf("broker not running (%s)\n", home)
		return nil
	}
	note := ""
	switch {
	case h.Protocol < api.Protocol():
		note = "; older than this berth: restart it with `berth stop`"
	case h.Protocol > api.Protocol():
		note = "; newer than this berth: install the same version of berth and berth-shim"
	}
	fmt.Printf("broker %s (protocol %d, pid %d, %s%s)\n", h.Version, h.Protocol, h.PID, home, note)
	return nil
}
