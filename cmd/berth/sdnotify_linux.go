//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
)

// sdNotifier tells systemd about the broker's state (Type=notify units) over
// the datagram socket named by $NOTIFY_SOCKET ("@name" is an abstract
// socket, which the net package maps). Without the variable it does nothing.
type sdNotifier struct{ addr string }

// newSDNotifier reads $NOTIFY_SOCKET and unsets it, so that processes the
// broker starts do not talk to systemd in its name.
func newSDNotifier() sdNotifier {
	addr := os.Getenv("NOTIFY_SOCKET")
	os.Unsetenv("NOTIFY_SOCKET")
	return sdNotifier{addr: addr}
}

// notify sends one state line such as "READY=1" or "STOPPING=1".
func (n sdNotifier) notify(state string) error {
	if n.addr == "" {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.addr, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.addr, err)
	}
	return nil
}
