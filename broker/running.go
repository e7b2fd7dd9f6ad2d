package broker

import (
	"errors"
	"fmt"
)

// ErrAlreadyRunning reports that another broker holds the home.
var ErrAlreadyRunning = errors.New("broker already running")

// RunningError is ErrAlreadyRunning with what is known of the other broker:
// its pid (0 when unknown) and the rest of the message (the fix).
type RunningError struct {
	PID    int
	Detail string // appended to the message, e.g. ": stop it with `berth stop`"
}

func (e *RunningError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%v (pid %d)%s", ErrAlreadyRunning, e.PID, e.Detail)
	}
	return ErrAlreadyRunning.Error() + e.Detail
}

// Unwrap makes errors.Is(err, ErrAlreadyRunning) hold.
func (e *RunningError) Unwrap() error { return ErrAlreadyRunning }
