package brokerconfig

import "testing"

func TestConfigValidate(t *testing.T) {
	good := Config{Home: "/h", PortStart: 4242, PortEnd: 5242, Auth: "none", LogLevel: "info", ReapInterval: 1}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	withEmbeddings := good
	withEmbeddings.EmbeddingsURL, withEmbeddings.EmbeddingsModel = "http://127.0.0.1:11434", "nomic-embed-text"
	if err := withEmbeddings.Validate(); err != nil || withEmbeddings.Embedder() == nil || good.Embedder() != nil {
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
