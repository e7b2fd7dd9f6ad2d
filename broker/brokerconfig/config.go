package brokerconfig

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/project/search"
	"github.com/berth-dev/berth/project/search/embeddings"
)

// Config is the broker's configuration. The fields that are keys are
// filled from the key table (keys.go); the others are set by `berth serve`.
type Config struct {
	Home           string        // everything the broker keeps (socket, lock, db, logs, token)
	Listen         string        // control API TCP address; "" disables
	PortStart      int           // first port of the per-project range
	PortEnd        int           // last port of the range (inclusive)
	MountGrace     time.Duration // how long a mount outlives its last holder
	IdleTimeout    time.Duration // an auto-started broker exits after this long with no mounts; 0 = never
	SessionTimeout time.Duration // idle MCP HTTP sessions are closed after this; 0 = never
	Auth           string        // "none" or "token"
	LogLevel       string        // debug, info, warn or error
	ReapInterval   time.Duration // how often dead shim holders are looked for
	// AllowOutside (rag.allow_outside) lists directories outside every
	// project that indexing may follow symlinks into; absolute and clean.
	AllowOutside []string
	// EmbeddingsURL and EmbeddingsModel (search.embeddings.url, .model)
	// name the user's embedding server; empty: standards search is BM25F
	// alone.
	EmbeddingsURL   string
	EmbeddingsModel string
	// Servers (servers) are the MCP servers hosted for every project,
	// validated by config.ValidateServers (config_servers.go).
	Servers map[string]config.Server

	ListenOptional bool // a busy Listen address is logged, not fatal (auto-started brokers)
	Autostarted    bool // started by a shim: idle_timeout applies, a newer shim may ask it to make way

	// TokenOnly turns the account check off: every TCP listener admits
	// only the bearer token (and the dashboard's login keys), as on systems
	// that cannot tell a connection's account (macOS). `berth serve --token-only`.
	TokenOnly bool
}

// EffectiveIdleTimeout is the idle timeout that applies: idle_timeout for
// a broker a shim started, none for one a user or a service started.
func (c Config) EffectiveIdleTimeout() time.Duration {
	if !c.Autostarted {
		return 0
	}
	return c.IdleTimeout
}

// Validate checks the configuration and names the key to fix.
func (c Config) Validate() error {
	if c.Home == "" {
		return fmt.Errorf("home is empty: set BERTH_HOME or home in the config")
	}
	if c.PortStart < 1 || c.PortStart > 65535 || c.PortEnd < 1 || c.PortEnd > 65535 {
		return fmt.Errorf("ports.start (%d) and ports.end (%d) must be ports (1-65535)", c.PortStart, c.PortEnd)
	}
	if c.PortStart > c.PortEnd {
		return fmt.Errorf("ports.start (%d) is above ports.end (%d)", c.PortStart, c.PortEnd)
	}
	if c.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			return fmt.Errorf("listen %q: %v (use host:port, e.g. 127.0.0.1:4241, or empty to disable)", c.Listen, err)
		}
	}
	if c.MountGrace < 0 || c.IdleTimeout < 0 || c.SessionTimeout < 0 {
		return fmt.Errorf("mount_grace, idle_timeout and session_timeout must not be negative")
	}
	switch c.Auth {
	case "none", "token":
	default:
		return fmt.Errorf("auth %q: use none or token", c.Auth)
	}
	if _, err := c.Level(); err != nil {
		return err
	}
	if c.ReapInterval <= 0 {
		return fmt.Errorf("reap_interval must be positive")
	}
	if c.EmbeddingsURL != "" || c.EmbeddingsModel != "" {
		u, err := url.Parse(c.EmbeddingsURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("search.embeddings.url %q: give the embedding server's http(s) address, such as http://127.0.0.1:11434", c.EmbeddingsURL)
		}
		if c.EmbeddingsModel == "" {
			return fmt.Errorf("search.embeddings.model is empty: name the model %s serves, such as nomic-embed-text", c.EmbeddingsURL)
		}
	}
	return nil
}

// Embedder is the standards search's embedder that search.embeddings
// names, or nil.
func (c Config) Embedder() search.Embedder {
	if c.EmbeddingsURL == "" {
		return nil
	}
	return embeddings.New(c.EmbeddingsURL, c.EmbeddingsModel, nil)
}

// Level is log_level as a slog level.
func (c Config) Level() (slog.Level, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(c.LogLevel))); err != nil {
		return lv, fmt.Errorf("log_level %q: use debug, info, warn or error", c.LogLevel)
	}
	return lv, nil
}
