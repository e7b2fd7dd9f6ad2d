package brokerconfig

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Key is one broker configuration key, defined once. Its environment
// variable and `berth serve` flag are derived from its name; the viper
// defaults and bindings, the flags, Config's fields and the key table of
// docs/configuration.md are all derived from the list below (a test fails
// when the docs and the list disagree).
type Key struct {
	// Name is the key in config.yaml; a dot nests ("ports.start" is
	// start under ports).
	Name string
	// Default is the value when nothing sets the key; its Go type is the
	// key's type: string, int, time.Duration or []string.
	Default any
	// Doc says what the key does, for --help and the docs.
	Doc string
	// DefaultDoc, when set, is shown instead of Default (a default the
	// broker computes, such as home's).
	DefaultDoc string
	// NoFlag keys are set in the config file or the environment only.
	NoFlag bool
	// NoEnv keys have no environment variable either: a map such as
	// servers is set in the config file only.
	NoEnv bool
	// field is where ConfigFrom stores the value: a pointer into c of
	// Default's type.
	field func(c *Config) any
}

// Env is the key's environment variable: BERTH_ and the name in upper
// case with its dots as underscores (BERTH_PORTS_START).
func (k Key) Env() string {
	if k.NoEnv {
		return ""
	}
	return "BERTH_" + strings.ToUpper(strings.ReplaceAll(k.Name, ".", "_"))
}

// Flag is the key's `berth serve` flag without its dashes (ports-start),
// or "" for a NoFlag key.
func (k Key) Flag() string {
	if k.NoFlag {
		return ""
	}
	return strings.NewReplacer(".", "-", "_", "-").Replace(k.Name)
}

// keys are the broker's configuration keys, in the order the docs list them.
var keys = []Key{
	{
		Name: "home", Default: "", field: func(c *Config) any { return &c.Home },
		DefaultDoc: "`~/.local/state/berth` on Linux (`$XDG_STATE_HOME/berth` when set), `~/Library/Application Support/berth` on macOS",
		Doc: "everything the broker keeps: `berth.sock`, `berth.lock`, `berth.db`, `berth.log`, `berth.out`, `token`. " +
			"In a config file it applies only when neither `--home` nor `BERTH_HOME` is set (absolute, or `~/...`). " +
			"Shims and the broker must agree on it: a shim finds the broker only on the socket of its own home",
	},
	{
		Name: "listen", Default: "127.0.0.1:4241", field: func(c *Config) any { return &c.Listen },
		Doc: "the control API and dashboard over TCP; empty disables it (the unix socket is always on). " +
			"An auto-started broker logs a busy address and carries on with the socket; a broker you start fails with the error",
	},
	{
		Name: "ports.start", Default: 4242, field: func(c *Config) any { return &c.PortStart },
		Doc: "first port project endpoints are bound in",
	},
	{
		Name: "ports.end", Default: 5242, field: func(c *Config) any { return &c.PortEnd },
		Doc: "last port of that range (inclusive)",
	},
	{
		Name: "mount_grace", Default: 30 * time.Second, field: func(c *Config) any { return &c.MountGrace },
		Doc: "how long a project stays mounted after its last shim or pin leaves and its sessions go quiet: a sub-agent's session holds the project while a request of it is in flight (an open stream alone does not), and for this long after its last request (see [sessions](#sessions))",
	},
	{
		Name: "idle_timeout", Default: 10 * time.Minute, field: func(c *Config) any { return &c.IdleTimeout },
		Doc: "an auto-started broker (`--autostarted`, as a shim starts it) exits after this long with no projects and no open control API connections; " +
			"a broker you start, or a service, never does, whatever this says; `0` never",
	},
	{
		Name: "session_timeout", Default: time.Hour, field: func(c *Config) any { return &c.SessionTimeout },
		Doc: "a network MCP session idle this long (no request in flight, no stream open) is ended, and a saved `/mcp` session unused this long is not restored after a restart; " +
			"a busy session never times out, and idle ones make way at once when the project is full (see [sessions](#sessions)); `0` never",
	},
	{
		Name: "auth", Default: "none", field: func(c *Config) any { return &c.Auth },
		Doc: "`none`, or `token`: a second key besides the account check (every TCP listener admits only the broker's own account): " +
			"a request with `Authorization: Bearer <token>` from `$BERTH_HOME/token` (0600, created on first use) is admitted from any account; " +
			"the state file carries it in `headers`. Where the account check cannot run (macOS) the token is always on and required; see [security](security.md)",
	},
	{
		Name: "log_level", Default: "info", field: func(c *Config) any { return &c.LogLevel },
		Doc: "`debug`, `info`, `warn` or `error`; the log is `$BERTH_HOME/berth.log` (and stderr for a broker you start)",
	},
	{
		Name: "rag.allow_outside", Default: []string(nil), NoFlag: true, DefaultDoc: "none",
		field: func(c *Config) any { return &c.AllowOutside },
		Doc: "folders outside every project that standards indexing may follow symlinks into (absolute, or `~/...`; " +
			"in the environment, separated by spaces); see [symlinks](#symlinks-in-the-sources)",
	},
	{
		Name: "reap_interval", Default: 2 * time.Second, NoFlag: true, field: func(c *Config) any { return &c.ReapInterval },
		Doc: "how often the broker checks that the shims holding projects are alive",
	},
	{
		Name: "search.embeddings.url", Default: "", NoFlag: true, DefaultDoc: "none",
		field: func(c *Config) any { return &c.EmbeddingsURL },
		Doc: "an OpenAI-compatible embeddings server (`/v1/embeddings`: Ollama, llama.cpp's server, LM Studio), such as `http://127.0.0.1:11434`: " +
			"standards search then also ranks sections by their vectors and fuses both rankings; set in the broker's config only, never a project's; see [search](search.md)",
	},
	{
		Name: "search.embeddings.model", Default: "", NoFlag: true, DefaultDoc: "none",
		field: func(c *Config) any { return &c.EmbeddingsModel },
		Doc:   "the embedding model `search.embeddings.url` serves, such as `nomic-embed-text`",
	},
	{
		Name: "servers", Default: map[string]config.Server(nil), NoFlag: true, NoEnv: true, DefaultDoc: "none",
		field: func(c *Config) any { return &c.Servers },
		Doc: "MCP servers Berth runs for every project, beside the project's own `servers`, with no approval needed: " +
			"a map of name to `command`, `args`, `env`, `cwd`, `url`, `enabled`, `share`, `start`, `tools`, `call_timeout`, " +
			"as in a project's config; see [docs/servers.md](servers.md). In the config file only",
	},
}

// Keys lists the broker's configuration keys.
func Keys() []Key { return slices.Clone(keys) }

// NewViper returns a viper holding every key's default and bound to its
// environment variable (an empty value counts: BERTH_LISTEN= disables
// listen). Flags are bound with BindFlags; a file is read with ReadConfig.
func NewViper() *viper.Viper {
	v := viper.New()
	v.AllowEmptyEnv(true)
	for _, k := range keys {
		if k.NoEnv {
			continue // read from the file alone (ConfigFrom)
		}
		v.SetDefault(k.Name, k.Default)
		_ = v.BindEnv(k.Name, k.Env()) // fails only without a key name
	}
	return v
}

// AddFlags adds a flag for every key that has one, with the key's type,
// default and doc.
func AddFlags(fs *pflag.FlagSet) {
	for _, k := range keys {
		if k.Flag() == "" {
			continue
		}
		usage := strings.ReplaceAll(k.Doc, "`", "") // pflag reads a back-quoted word as the value's name
		switch d := k.Default.(type) {
		case string:
			fs.String(k.Flag(), d, usage)
		case int:
			fs.Int(k.Flag(), d, usage)
		case time.Duration:
			fs.Duration(k.Flag(), d, usage)
		case []string:
			fs.StringSlice(k.Flag(), d, usage)
		default:
			panic(fmt.Sprintf("config key %s: default of type %T", k.Name, k.Default))
		}
	}
}

// BindFlags makes the flags AddFlags added override the file and the
// environment in v, when they are set.
func BindFlags(v *viper.Viper, fs *pflag.FlagSet) error {
	for _, k := range keys {
		if k.Flag() == "" {
			continue
		}
		if err := v.BindPFlag(k.Name, fs.Lookup(k.Flag())); err != nil {
			return fmt.Errorf("bind --%s: %w", k.Flag(), err)
		}
	}
	return nil
}

// KeysMarkdown is the key table of docs/configuration.md.
func KeysMarkdown() string {
	var b strings.Builder
	b.WriteString("| key | flag | environment | default | meaning |\n|---|---|---|---|---|\n")
	for _, k := range keys {
		flag := "—"
		if k.Flag() != "" {
			flag = "`--" + k.Flag() + "`"
		}
		env := "—"
		if k.Env() != "" {
			env = "`" + k.Env() + "`"
		}
		def := k.DefaultDoc
		if def == "" {
			def = "`" + formatValue(k.Default) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Name, flag, env, def, k.Doc)
	}
	return b.String()
}

// formatValue writes a default as a user would type it (10m, not 10m0s).
func formatValue(v any) string {
	d, ok := v.(time.Duration)
	if !ok {
		return fmt.Sprint(v)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
