package broker

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/spf13/viper"
)

// Config is the broker's configuration.
type Config struct {
	Home           string        // everything the broker keeps (socket, lock, db, logs, token)
	Listen         string        // control API TCP address; "" disables
	ListenOptional bool          // a busy Listen address is logged, not fatal (auto-started brokers)
	Autostarted    bool          // started by a shim: a newer shim may ask it to make way
	PortStart      int           // first port of the per-project range
	PortEnd        int           // last port of the range (inclusive)
	MountGrace     time.Duration // how long a mount outlives its last holder
	IdleTimeout    time.Duration // exit after this long with no mounts; 0 = never
	SessionTimeout time.Duration // idle MCP HTTP sessions are closed after this; 0 = never
	Auth           string        // "none" or "token"
	ReapInterval   time.Duration // how often dead shim holders are looked for
	// AllowOutside (rag.allow_outside) lists directories outside every
	// project that indexing may follow symlinks into; absolute and clean.
	AllowOutside []string
}

// Defaults for the configuration keys.
const (
	DefaultListen         = "127.0.0.1:4241"
	DefaultPortStart      = 4242
	DefaultPortEnd        = 5242
	DefaultMountGrace     = 30 * time.Second
	DefaultSessionTimeout = time.Hour
)

// SetDefaults registers the defaults of every key on v.
func SetDefaults(v *viper.Viper) {
	v.SetDefault("listen", DefaultListen)
	v.SetDefault("ports.start", DefaultPortStart)
	v.SetDefault("ports.end", DefaultPortEnd)
	v.SetDefault("mount_grace", DefaultMountGrace)
	v.SetDefault("idle_timeout", time.Duration(0))
	v.SetDefault("session_timeout", DefaultSessionTimeout)
	v.SetDefault("auth", "none")
	v.SetDefault("reap_interval", 2*time.Second)
}

// ConfigFrom reads and validates the configuration held by v.
func ConfigFrom(v *viper.Viper, home string) (Config, error) {
	c := Config{
		Home:           home,
		Listen:         strings.TrimSpace(v.GetString("listen")),
		PortStart:      v.GetInt("ports.start"),
		PortEnd:        v.GetInt("ports.end"),
		MountGrace:     v.GetDuration("mount_grace"),
		IdleTimeout:    v.GetDuration("idle_timeout"),
		SessionTimeout: v.GetDuration("session_timeout"),
		Auth:           strings.ToLower(strings.TrimSpace(v.GetString("auth"))),
		ReapInterval:   v.GetDuration("reap_interval"),
	}
	allow, err := config.AbsDirs("rag.allow_outside", "", v.GetStringSlice("rag.allow_outside"))
	if err != nil {
		return c, err
	}
	c.AllowOutside = allow
	return c, c.Validate()
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
			return fmt.Errorf("listen %q: %v (use host:port, e.g. %s, or empty to disable)", c.Listen, err, DefaultListen)
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
	if c.ReapInterval <= 0 {
		return fmt.Errorf("reap_interval must be positive")
	}
	return nil
}
