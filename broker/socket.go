package broker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// listenSocket binds the control socket with mode 0600. A leftover socket
// file is removed only when nothing answers on it.
func listenSocket(path string) (net.Listener, error) {
	if _, err := os.Lstat(path); err == nil {
		c, err := net.DialTimeout("unix", path, 500*time.Millisecond)
		if err == nil {
			c.Close()
			return nil, &RunningError{Detail: ": something answers on " + path}
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("stat socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("secure socket %s: %w", path, err)
	}
	return ln, nil
}
