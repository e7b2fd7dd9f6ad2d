package brokerconfig

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/config"
	"github.com/spf13/viper"
)

// Schema is the form of the broker's config file, derived from the keys
// (a dotted name nests: ports.start is start under ports) and the servers
// section, which is a project's (project/config).
func Schema() *config.Schema {
	root := &config.Schema{Kind: config.KindSection, Keys: map[string]*config.Schema{"servers": config.ServersSchema}}
	for _, k := range keys {
		if _, ok := k.Default.(map[string]config.Server); ok {
			continue // servers: the section above
		}
		parts := strings.Split(k.Name, ".")
		s := root
		for _, p := range parts[:len(parts)-1] {
			if s.Keys[p] == nil {
				s.Keys[p] = &config.Schema{Kind: config.KindSection, Keys: map[string]*config.Schema{}}
			}
			s = s.Keys[p]
		}
		s.Keys[parts[len(parts)-1]] = &config.Schema{Kind: k.kind(), Example: k.example()}
	}
	// A section's example is its first key with its default.
	for name, s := range root.Keys {
		if s.Kind == config.KindSection && s.Example == "" {
			for _, k := range keys {
				if sub, ok := strings.CutPrefix(k.Name, name+"."); ok {
					s.Example = fmt.Sprintf("{%s: %s}", sub, k.example())
					break
				}
			}
		}
	}
	return root
}

// kind is the form of the key's value, from its default's type.
func (k Key) kind() config.Kind {
	switch k.Default.(type) {
	case int:
		return config.KindInt
	case time.Duration:
		return config.KindDuration
	case []string:
		return config.KindStrings
	default:
		return config.KindString
	}
}

// example is a value of the key's form for hints: its default, or a
// typical value when the default is empty.
func (k Key) example() string {
	switch d := k.Default.(type) {
	case []string:
		return "[~/notes]"
	case string:
		if d == "" {
			return "~/berth"
		}
	}
	return formatValue(k.Default)
}

// ConfigFrom reads every key from v (defaults, environment, flags and the
// file read) for the broker of home, strictly: a value of the wrong form
// is an error naming where it was set (the key, or its BERTH_ variable),
// the value and the form; a BERTH_ variable that is a misspelt key is an
// error naming the key's. The result is validated.
func ConfigFrom(v *viper.Viper, home string) (Config, error) {
	var c Config
	if err := checkEnv(os.Environ()); err != nil {
		return c, err
	}
	for _, k := range keys {
		raw := v.Get(k.Name)
		where := k.Name
		if env, ok := os.LookupEnv(k.Env()); ok && fmt.Sprint(raw) == env {
			where = k.Env()
		}
		bad := func() error {
			return fmt.Errorf("%s", config.FormError(where, fmt.Sprint(raw), k.kind(), k.example()))
		}
		switch p := k.field(&c).(type) {
		case *string:
			if _, ok := raw.([]any); ok {
				return c, bad()
			}
			*p = strings.TrimSpace(fmt.Sprint(valueOr(raw, "")))
		case *int:
			n, ok := toInt(raw)
			if !ok {
				return c, bad()
			}
			*p = n
		case *time.Duration:
			d, ok := toDuration(raw)
			if !ok {
				return c, bad()
			}
			*p = d
		case *[]string:
			if l := v.GetStringSlice(k.Name); len(l) > 0 {
				*p = l
			}
		case *map[string]config.Server:
			servers, err := readServers(v)
			if err != nil {
				return c, err
			}
			*p = servers
		default:
			panic(fmt.Sprintf("config key %s: field of type %T", k.Name, p))
		}
	}
	c.Home = home
	c.Auth = strings.ToLower(c.Auth)
	if len(c.AllowOutside) > 0 {
		allow, err := config.AbsDirs("rag.allow_outside", "", c.AllowOutside)
		if err != nil {
			return c, err
		}
		c.AllowOutside = allow
	}
	return c, c.Validate()
}

func valueOr(v, def any) any {
	if v == nil {
		return def
	}
	return v
}

// toInt reads a whole number: an int of the file or a flag, or the text
// of a variable.
func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		return i, err == nil
	}
	return 0, false
}

// toDuration reads a duration with its unit: a flag's or a default's, or
// the text of the file or a variable ("0" alone is allowed).
func toDuration(v any) (time.Duration, bool) {
	switch d := v.(type) {
	case time.Duration:
		return d, true
	case string:
		x, err := config.ParseDuration(d)
		return x, err == nil
	}
	return 0, false
}

// OtherEnv are the BERTH_ variables that are not keys, read by `berth serve`.
var OtherEnv = []string{api.ConfigEnv, api.ReadyFDEnv}

// checkEnv refuses a BERTH_ variable that is not a key's but looks like
// one (BERTH_PORT_START for BERTH_PORTS_START): the setting it was meant
// for would silently keep its default. Other BERTH_ variables (of tests,
// of other tools) are left alone.
func checkEnv(environ []string) error {
	var names []string
	for _, k := range keys {
		names = append(names, strings.TrimPrefix(k.Env(), "BERTH_"))
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		short, ok := strings.CutPrefix(name, "BERTH_")
		if !ok || slices.Contains(names, short) || slices.Contains(OtherEnv, name) {
			continue
		}
		if m := config.Closest(short, names); m != "" {
			return fmt.Errorf("%s is not a Berth setting: did you mean BERTH_%s? (rename the variable; docs/configuration.md lists them)", name, m)
		}
	}
	return nil
}
