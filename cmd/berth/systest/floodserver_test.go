package systest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// removeFloodServer removes what floodServer built.
func removeFloodServer() {
	if floodBin != "" {
		os.RemoveAll(filepath.Dir(floodBin))
	}
}

var (
	floodOnce sync.Once
	floodBin  string
	floodErr  error
)

// floodServer builds testdata/floodserver once per test process (TestMain
// removes it).
func floodServer(t *testing.T) string {
	t.Helper()
	floodOnce.Do(func() {
		dir, err := os.MkdirTemp("", "berth-flood-")
		if err != nil {
			floodErr = err
			return
		}
		floodBin = filepath.Join(dir, "floodserver")
		if out, err := exec.Command("go", "build", "-o", floodBin, "./testdata/floodserver").CombinedOutput(); err != nil {
			floodErr = fmt.Errorf("build the flood server: %v\n%s", err, out)
		}
	})
	if floodErr != nil {
		t.Fatal(floodErr)
	}
	return floodBin
}
