package shim

import (
	"context"
	"fmt"
	"io"
	"time"
)

// codeCannotServe is the JSON-RPC error code a shim that cannot serve
// answers requests with (a server error, in the range JSON-RPC leaves to
// implementations).
const codeCannotServe = -32001

// How long a shim that cannot serve keeps answering: it stops once stdin
// closes, refuseQuiet after its last answer, or refuseMax after it began
// (an IDE sends initialize at once).
var (
	refuseQuiet = 500 * time.Millisecond
	refuseMax   = 30 * time.Second
)

// refuse answers the IDE when the shim cannot serve it: every request,
// those already read (queued) first, gets a JSON-RPC error whose message
// names the problem and its fix, so that the IDE shows the reason instead
// of a timeout. Notifications and responses are dropped.
func refuse(ctx context.Context, lines <-chan []byte, queued [][]byte, out io.Writer, problem error) {
	msg := fmt.Sprintf("berth-shim cannot serve this project: %v", problem)
	answer := func(line []byte) bool {
		id, method, _ := parseEnvelope(line)
		if id == "" || method == "" {
			return false
		}
		_ = writeLine(out, errorResponse(id, codeCannotServe, msg))
		return true
	}
	answered := false
	for _, line := range queued {
		answered = answer(line) || answered
	}
	max := time.NewTimer(refuseMax)
	defer max.Stop()
	var quiet <-chan time.Time
	if answered {
		quiet = time.After(refuseQuiet)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-max.C:
			return
		case <-quiet:
			return
		case line, ok := <-lines:
			if !ok {
				return
			}
			if reply := checkLine(line); reply != nil {
				_ = writeLine(out, reply)
				continue
			}
			if answer(line) {
				quiet = time.After(refuseQuiet)
			}
		}
	}
}
