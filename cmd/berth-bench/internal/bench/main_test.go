package bench

import (
	"context"
	"os"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == floorMode { // the bench under test starts its floor from this binary
		if err := serveFloor(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	brokertest.Cleanup() // the binaries the tests built
	os.Exit(code)
}
