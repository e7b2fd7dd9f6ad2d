package broker

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestIdleTimerWaitsForMountsAndConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fired atomic.Int32
		i := newIdleTimer(time.Second, func() { fired.Add(1) })
		i.set(true) // started with no mounts

		// A control connection opens: no exit while it lasts.
		c := &fakeConn{}
		i.socketState(c, http.StateNew)
		i.socketState(c, http.StateActive)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatal("fired with a control connection open")
		}
		// A mount arrives, the connection goes (hijacked by a shim's stream).
		i.set(false)
		i.socketState(c, http.StateHijacked)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatal("fired with a mount")
		}
		// The mount ends: the timeout runs from there, once.
		i.set(true)
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatal("fired early")
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if fired.Load() != 1 {
			t.Fatalf("fired %d times after the timeout, want 1", fired.Load())
		}
	})
}

func TestIdleTimerOffWithoutTimeoutAndAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fired atomic.Int32
		off := newIdleTimer(0, func() { fired.Add(1) })
		off.set(true)
		stopped := newIdleTimer(time.Second, func() { fired.Add(1) })
		stopped.set(true)
		stopped.stop()
		c := &fakeConn{}
		stopped.socketState(c, http.StateNew)
		stopped.socketState(c, http.StateClosed)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatalf("fired %d times", fired.Load())
		}
	})
}

// fakeConn is a connection for the idle timer's books: only its identity counts.
type fakeConn struct{ net.Conn }

// TestIdleTimerCountsTCPConnectionsOnceAdmitted: a TCP connection the
// guard never admitted (another account's, refused) does not hold the
// broker up; an admitted one does until it closes.
func TestIdleTimerCountsTCPConnectionsOnceAdmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fired atomic.Int32
		i := newIdleTimer(time.Second, func() { fired.Add(1) })
		i.set(true)
		refused, owner := &fakeConn{}, &fakeConn{}
		i.tcpState(refused, http.StateNew)
		i.tcpState(refused, http.StateActive)
		i.tcpState(owner, http.StateNew)
		i.track(owner) // its first request was admitted
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatal("fired with the owner's connection open")
		}
		i.tcpState(owner, http.StateClosed)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		if fired.Load() != 1 {
			t.Fatalf("fired %d times with only a refused connection open, want 1", fired.Load())
		}
		i.tcpState(refused, http.StateClosed)
	})
}
