package mounttable

import (
	"errors"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

func TestBindPortPrefersThenWraps(t *testing.T) {
	base, _ := brokertest.PortRange(t, 4)
	ln, port, err := bindPort([]int{base + 2}, base, base+3, nil)
	if err != nil || port != base+2 {
		t.Fatalf("preferred: %d %v", port, err)
	}
	defer ln.Close()
	// Preferred taken: the next one, then wrap to the start.
	ln2, port2, err := bindPort([]int{base + 2}, base, base+3, nil)
	if err != nil || port2 != base+3 {
		t.Fatalf("next: %d %v", port2, err)
	}
	defer ln2.Close()
	ln3, port3, err := bindPort([]int{base + 2}, base, base+3, nil)
	if err != nil || port3 != base {
		t.Fatalf("wrap: %d %v", port3, err)
	}
	defer ln3.Close()
	// A preferred port outside the range is ignored.
	ln4, port4, err := bindPort([]int{1}, base, base+3, nil)
	if err != nil || port4 != base+1 {
		t.Fatalf("outside preferred: %d %v", port4, err)
	}
	defer ln4.Close()
	_, _, err = bindPort(nil, base, base+3, nil)
	if !errors.Is(err, errPortsFull) || !strings.Contains(err.Error(), "ports.start") {
		t.Fatalf("full: %v", err)
	}
}
