package systest

import (
	"os"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	brokertest.Cleanup()
	removeFloodServer()
	os.Exit(code)
}
