package systest

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/brokertest"
)

// Bound of what one repeated line adds to berth.log (docs/configuration.md,
// "Logs"): at most 5 copies and one line with the count of the rest per
// minute, each under 512 bytes.
const (
	floodLinesPerWindow = 5 + 1
	floodWindow         = time.Minute
	floodLineBytes      = 512
)

// TestDuplicateNotificationFloodKeepsTheLogSmall sends 20,000 duplicate
// notifications/initialized on one session: berth.log grows by the bound
// above (it grew 2.1 MB, one ERROR line each, before), and the session
// still works.
func TestDuplicateNotificationFloodKeepsTheLogSmall(t *testing.T) {
	t.Parallel()
	heavy(t)
	b := brokertest.StartBroker(t, brokertest.Options{Args: []string{"--log-level", "info"}})
	ctx := testCtx(t, 3*time.Minute)
	p := b.Attach(t, brokertest.Project(t, "flood", nil))
	sid := rawInitialize(t, ctx, p.URL)
	logPath := filepath.Join(b.Home, api.LogName)
	size := func() int64 {
		fi, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5000 {
				resp, err := client.Do(mcpPost(t, p.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).WithContext(ctx))
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					errs <- fmt.Errorf("notification answered %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if status, msg := callServerInfo(t, ctx, p.URL, sid); status != http.StatusOK || msg == nil || msg.Error != nil {
		t.Fatalf("the session after the flood: %d %+v", status, msg)
	}
	grew := size() - before
	windows := int64(math.Ceil(float64(took)/float64(floodWindow))) + 1
	bound := windows * floodLinesPerWindow * floodLineBytes
	t.Logf("20,000 duplicate notifications in %s grew berth.log by %d bytes (bound %d)", took.Round(time.Millisecond), grew, bound)
	if grew > bound {
		t.Errorf("berth.log grew %d bytes over %s, over the bound of %d", grew, took, bound)
	}
	raw, _ := os.ReadFile(logPath)
	if strings.Contains(string(raw), "duplicate initialized notification") {
		t.Error("the go-sdk's error line for each duplicate reached the log")
	}
	if !strings.Contains(string(raw), "repeated notifications/initialized ignored") || !strings.Contains(string(raw), "session="+sid) {
		t.Errorf("berth.log does not name the session that repeated itself:\n%s", raw)
	}
}
