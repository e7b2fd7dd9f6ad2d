package bench

import (
	"os"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	brokertest.Cleanup() // the binaries TestHostedBaseline built
	os.Exit(code)
}
