package systest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

func TestServePprofOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	port, _ := brokertest.PortRange(t, 1)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	brokertest.StartBroker(t, brokertest.Options{Args: []string{"--pprof", addr}})

	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "goroutine profile: total ") {
		t.Fatalf("goroutine profile: %d %.80s", resp.StatusCode, body)
	}

	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/debug/pprof/", nil)
	req.Host = "attacker.example"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host got %d, want 403", resp.StatusCode)
	}

	for _, bad := range []string{"0.0.0.0:6060", ":6060", "192.0.2.1:6060", "nonsense"} {
		_, err := brokertest.TryStartBroker(t, brokertest.Options{Args: []string{"--pprof", bad}})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("--pprof %s: %v, want a refusal naming loopback", bad, err)
		}
	}
}
