package broker

import (
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
		i.connState(nil, http.StateNew)
		i.connState(nil, http.StateActive)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatal("fired with a control connection open")
		}
		// A mount arrives, the connection goes (hijacked by a shim's stream).
		i.set(false)
		i.connState(nil, http.StateHijacked)
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
		stopped.connState(nil, http.StateNew)
		stopped.connState(nil, http.StateClosed)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if fired.Load() != 0 {
			t.Fatalf("fired %d times", fired.Load())
		}
	})
}
