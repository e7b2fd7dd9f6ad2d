package brokerconfig

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite the broker key table in docs/configuration.md")

const (
	docBegin = "<!-- broker keys: generated from broker/brokerconfig/keys.go; `go test ./broker/brokerconfig -run TestConfigurationDoc -update` rewrites it -->\n"
	docEnd   = "<!-- end of broker keys -->\n"
)

// TestConfigurationDocMatchesTheKeys fails when the key table of
// docs/configuration.md is not what the key list says.
func TestConfigurationDocMatchesTheKeys(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	before, rest, ok := strings.Cut(doc, docBegin)
	table, after, ok2 := strings.Cut(rest, docEnd)
	if !ok || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around the broker key table", path, docBegin, docEnd)
	}
	want := KeysMarkdown()
	if *update {
		if err := os.WriteFile(path, []byte(before+docBegin+want+docEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("%s differs from broker/brokerconfig/keys.go (go test ./broker/brokerconfig -run TestConfigurationDoc -update; -want +got):\n%s", path, diff)
	}
}

func TestEveryKeyReachesConfigFromEachSource(t *testing.T) {
	if got := keyNamed(t, "home").Env(); got != api.HomeEnv {
		t.Errorf("home's variable %s, want %s", got, api.HomeEnv)
	}
	// Defaults alone.
	c, err := ConfigFrom(NewViper(), "/h")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Home: "/h", Listen: "127.0.0.1:4241", PortStart: 4242, PortEnd: 5242, MountGrace: 30 * time.Second,
		IdleTimeout: 10 * time.Minute, SessionTimeout: time.Hour, Auth: "none", LogLevel: "info", ReapInterval: 2 * time.Second}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	// The environment, then a flag above it.
	t.Setenv("BERTH_PORTS_START", "6000")
	t.Setenv("BERTH_LISTEN", "")
	t.Setenv("BERTH_REAP_INTERVAL", "5s")
	t.Setenv("BERTH_MOUNT_GRACE", "1m")
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse([]string{"--mount-grace", "2m", "--ports-end", "6001", "--log-level", "debug"}); err != nil {
		t.Fatal(err)
	}
	v := NewViper()
	if err := BindFlags(v, fs); err != nil {
		t.Fatal(err)
	}
	c, err = ConfigFrom(v, "/h")
	if err != nil {
		t.Fatal(err)
	}
	if c.PortStart != 6000 || c.PortEnd != 6001 || c.Listen != "" || c.ReapInterval != 5*time.Second || c.MountGrace != 2*time.Minute || c.LogLevel != "debug" {
		t.Errorf("from the environment and flags: %+v", c)
	}
	// Every key but the NoFlag ones has its flag, with the key's default.
	for _, k := range Keys() {
		f := fs.Lookup(k.Flag())
		switch {
		case k.NoFlag && k.Flag() != "":
			t.Errorf("%s: NoFlag key with flag %q", k.Name, k.Flag())
		case !k.NoFlag && f == nil:
			t.Errorf("%s: no flag --%s", k.Name, k.Flag())
		case !k.NoFlag && f.DefValue != fmt.Sprint(k.Default):
			t.Errorf("--%s default %q, want %q", k.Flag(), f.DefValue, fmt.Sprint(k.Default))
		}
	}
}

func TestIdleTimeoutAppliesOnlyToAutostartedBrokers(t *testing.T) {
	c, err := ConfigFrom(NewViper(), "/h")
	if err != nil {
		t.Fatal(err)
	}
	if c.EffectiveIdleTimeout() != 0 {
		t.Errorf("a broker started by hand has idle timeout %v", c.EffectiveIdleTimeout())
	}
	c.Autostarted = true
	if c.EffectiveIdleTimeout() != 10*time.Minute {
		t.Errorf("an auto-started broker's default idle timeout is %v, want 10m", c.EffectiveIdleTimeout())
	}
}

func keyNamed(t *testing.T, name string) Key {
	t.Helper()
	for _, k := range Keys() {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no key %s", name)
	return Key{}
}
