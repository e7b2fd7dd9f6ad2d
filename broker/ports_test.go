package broker

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

func TestConfigValidate(t *testing.T) {
	good := Config{Home: "/h", PortStart: 4242, PortEnd: 5242, Auth: "none", LogLevel: "info", ReapInterval: 1}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	withEmbeddings := good
	withEmbeddings.EmbeddingsURL, withEmbeddings.EmbeddingsModel = "http://127.0.0.1:11434", "nomic-embed-text"
	if err := withEmbeddings.Validate(); err != nil || withEmbeddings.embedder() == nil || good.embedder() != nil {
		t.Fatalf("search.embeddings: %v", err)
	}
	for name, mut := range map[string]func(*Config){
		"no home":                    func(c *Config) { c.Home = "" },
		"inverted":                   func(c *Config) { c.PortStart, c.PortEnd = 5000, 4000 },
		"port zero":                  func(c *Config) { c.PortStart = 0 },
		"bad listen":                 func(c *Config) { c.Listen = "nonsense" },
		"bad auth":                   func(c *Config) { c.Auth = "magic" },
		"bad level":                  func(c *Config) { c.LogLevel = "loud" },
		"neg grace":                  func(c *Config) { c.MountGrace = -1 },
		"no interval":                func(c *Config) { c.ReapInterval = 0 },
		"embeddings without a model": func(c *Config) { c.EmbeddingsURL = "http://127.0.0.1:11434" },
		"embeddings not over http":   func(c *Config) { c.EmbeddingsURL, c.EmbeddingsModel = "127.0.0.1:11434", "m" },
		"a model without a server":   func(c *Config) { c.EmbeddingsModel = "m" },
	} {
		c := good
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted %+v", name, c)
		}
	}
}
