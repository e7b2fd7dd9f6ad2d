package loopback

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/peer/peertest"
)

// TestListenHoldsBothSides: one listener accepts on 127.0.0.1 and on
// [::1] at the same port; while it is open neither side can be bound,
// and Close releases both.
func TestListenHoldsBothSides(t *testing.T) {
	peertest.NeedIPv6(t)
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("Addr %v, want 127.0.0.1", ln.Addr())
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "%s\n", c.LocalAddr())
			c.Close()
		}
	}()
	for _, host := range []string{"127.0.0.1", "::1"} {
		a := addr(host, port)
		c, err := net.DialTimeout("tcp", a, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", a, err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || string(got) != a+"\n" {
			t.Fatalf("dial %s: accepted as %q, %v", a, got, err)
		}
		if other, err := net.Listen("tcp", a); err == nil {
			other.Close()
			t.Fatalf("%s could be bound while the listener holds it", a)
		}
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
	for _, host := range []string{"127.0.0.1", "::1"} {
		other, err := net.Listen("tcp", addr(host, port))
		if err != nil {
			t.Fatalf("%s still held after Close: %v", addr(host, port), err)
		}
		other.Close()
	}
}

// TestListenRefusesAPortWhoseIPv6SideIsTaken: a port held on [::1] alone
// is taken (EADDRINUSE), and its 127.0.0.1 side is left free.
func TestListenRefusesAPortWhoseIPv6SideIsTaken(t *testing.T) {
	peertest.NeedIPv6(t)
	squat, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer squat.Close()
	port := squat.Addr().(*net.TCPAddr).Port
	if ln, err := Listen(port); !errors.Is(err, syscall.EADDRINUSE) {
		if ln != nil {
			ln.Close()
		}
		t.Fatalf("Listen(%d) with [::1]:%d taken: %v, want EADDRINUSE", port, port, err)
	}
	v4, err := net.Listen("tcp4", addr("127.0.0.1", port))
	if err != nil {
		t.Fatalf("the refused Listen left 127.0.0.1:%d held: %v", port, err)
	}
	v4.Close()
}

// TestListenAddr: loopback names bind both sides; localhost too.
func TestListenAddr(t *testing.T) {
	peertest.NeedIPv6(t)
	for _, a := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		ln, err := ListenAddr(a)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if _, ok := ln.(*pair); !ok {
			t.Errorf("%s: a %T, not both sides", a, ln)
		}
		ln.Close()
	}
	if _, err := ListenAddr("127.0.0.1:http-alt"); err == nil {
		t.Error("a port name was taken as a port number")
	}
}
