package shim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// holdInterval is how often a --transport http shim checks its broker.
const holdInterval = time.Second

// hold is --transport http: the IDE speaks MCP over HTTP to the state
// file's url, so stdin carries nothing to forward. The shim keeps the
// project attached until stdin closes, answers any request on stdin with an
// error naming the url, and when the broker goes away attaches again
// (starting one if it may), whose broker rewrites the state file.
func hold(ctx context.Context, lines <-chan []byte, out io.Writer, current func() *Attachment, reattach func(context.Context) error, log *slog.Logger) error {
	tick := time.NewTicker(holdInterval)
	defer tick.Stop()
	f := &forwarder{out: out}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			reply := checkLine(line)
			if id, method, _ := parseEnvelope(line); reply == nil && id != "" && method != "" {
				reply = errorResponse(id, -32600, fmt.Sprintf(
					"berth-shim runs with --transport http and forwards nothing on stdio: speak MCP to %s, or run berth-shim without --transport http",
					current().Resp.URL))
			}
			if reply != nil {
				if err := f.writeOut(reply); err != nil {
					return fmt.Errorf("write to stdout: %w", err)
				}
			}
		case <-tick.C:
			if ping(ctx, current().Client) == nil {
				continue
			}
			log.Warn("broker lost: attaching again")
			if err := reattach(ctx); err != nil {
				log.Warn("attach failed; trying again", "err", err, "in", holdInterval)
			}
		}
	}
}
