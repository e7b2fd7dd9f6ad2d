package brokerconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/config"
)

// configFile writes a broker config file and reads it as `berth serve` does:
// a mistake is refused by ReadConfig (strictly) or ConfigFrom.
func configFile(t *testing.T, body string) (Config, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	v := NewViper()
	if err := ReadConfig(v, file); err != nil {
		return Config{}, err
	}
	return ConfigFrom(v, "/h")
}

func TestBrokerConfigServers(t *testing.T) {
	t.Setenv("BERTH_SERVERS", "not a map: the key has no variable")
	c, err := configFile(t, "listen: ''\nservers:\n  web-api:\n    command: npx\n    args: [-y, web-api-mcp]\n"+
		"    env: {API_TOKEN: secret}\n    share: user\n    call_timeout: 2m\n  docs:\n    url: http://127.0.0.1:3001/mcp\n")
	if err != nil {
		t.Fatal(err)
	}
	web, docs := c.Servers["web-api"], c.Servers["docs"]
	if len(c.Servers) != 2 || web.Command != "npx" || web.Env["API_TOKEN"] != "secret" || web.Share != config.ShareUser ||
		web.Start != config.StartLazy || web.CallTimeout.Minutes() != 2 || docs.URL == "" || docs.Share != config.ShareProject {
		t.Errorf("servers read as %+v", c.Servers)
	}
	c, err = configFile(t, "listen: ''\n")
	if err != nil || c.Servers != nil {
		t.Errorf("no servers: %v %+v", err, c.Servers)
	}
	for body, want := range map[string]string{
		"servers:\n  web:\n    command: x\n    url: http://h/mcp\n":  "servers.web: both command and url are set",
		"servers:\n  Web:\n    command: x\n":                         `servers.Web: "Web" is not a valid tool prefix`,
		"servers:\n  web:\n    command: x\n    share: team\n":        `servers.web.share "team"`,
		"servers:\n  web:\n    command: x\n    call_timeout: soon\n": `servers.web.call_timeout: "soon" is not a duration`,
	} {
		_, err := configFile(t, body)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "config.yaml") {
			t.Errorf("%q: %v, want the file and %q", body, err, want)
		}
	}
}
