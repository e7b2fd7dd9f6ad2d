package systest

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	raiseParallel()
	code := m.Run()
	chromiumOnce.stop()
	brokertest.Cleanup()
	removeFloodServer()
	os.Exit(code)
}

// raiseParallel runs up to two parallel tests per CPU (at most four)
// unless -parallel was given: the system tests mostly wait on the
// processes they start (brokers, shims, npm servers), not on the CPU, and
// four at once keep a small, shared machine responsive and the tests'
// deadlines met. Tests that share a home,
// set the process environment, or measure what a broker costs stay serial.
func raiseParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	switch {
	case given:
	case os.Getenv("BERTH_TEST_RACE") != "":
		// Brokers built with the race detector spend several times the
		// CPU: one test at a time keeps their deadlines within reach.
		flag.Set("test.parallel", "1")
	default:
		flag.Set("test.parallel", strconv.Itoa(min(2*runtime.GOMAXPROCS(0), 4)))
	}
}
