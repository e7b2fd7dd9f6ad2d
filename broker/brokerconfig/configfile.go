package brokerconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/project/config"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// ConfigFile is the file that holds the broker's settings, and why.
type ConfigFile struct {
	// Path is the file to read; "" when there is none.
	Path string
	// Named is set when --config or BERTH_CONFIG named it.
	Named bool
	// Notice is one line for the user about the choice (a file read from
	// the old location, or one left unread beside the one read); "" for none.
	Notice string
	// Want is where the settings belong: Path when named, else the file
	// the broker reads first (where to create one, or move one to).
	Want string
}

// FindConfig chooses the config file of the broker of home:
//
//   - named (--config), else $BERTH_CONFIG: that file, which must exist;
//   - for the default home (api.UserStateHome): the user's config file
//     (api.UserConfigFile, ~/.config/berth/config.yaml on Linux), else the
//     old location, home's config.yaml, with a notice;
//   - for any other home (BERTH_HOME or --home names one of its own): that
//     home's config.yaml. A broker with a home of its own is a separate
//     instance (a test, a second setup): it never reads the user's file.
func FindConfig(named, home string) (ConfigFile, error) {
	how := "--config"
	if named == "" {
		named, how = os.Getenv(api.ConfigEnv), api.ConfigEnv
	}
	if named != "" {
		abs, err := filepath.Abs(named)
		if err != nil {
			return ConfigFile{}, err
		}
		if _, err := os.Stat(abs); err != nil {
			return ConfigFile{}, fmt.Errorf("config file %s (named by %s): %w (fix the path, or create the file)", abs, how, errors.Unwrap(err))
		}
		return ConfigFile{Path: abs, Named: true, Want: abs}, nil
	}
	old := filepath.Join(home, api.ConfigName)
	if def, err := api.UserStateHome(); err != nil || filepath.Clean(def) != filepath.Clean(home) {
		if exists(old) {
			return ConfigFile{Path: old, Want: old}, nil
		}
		return ConfigFile{Want: old}, nil
	}
	user, err := api.UserConfigFile()
	if err != nil {
		return ConfigFile{}, err
	}
	switch hasUser, hasOld := exists(user), user != old && exists(old); {
	case hasUser && hasOld:
		return ConfigFile{Path: user, Want: user, Notice: fmt.Sprintf("%s is not read: the settings are read from %s (merge what you need into it and remove %s)", old, user, old)}, nil
	case hasUser:
		return ConfigFile{Path: user, Want: user}, nil
	case hasOld:
		return ConfigFile{Path: old, Want: user, Notice: fmt.Sprintf("reading settings from the old location %s: move the file to %s (mkdir -p %s && mv %s %s)",
			old, user, filepath.Dir(user), old, user)}, nil
	}
	return ConfigFile{Want: user}, nil
}

// ReadConfig reads file into v, strictly: a syntax error, a key Berth
// does not know or a value of the wrong form is a *config.Error with the
// line and column; the servers section is checked as a project's is.
func ReadConfig(v *viper.Viper, file string) error {
	data, err := config.ReadFile(file)
	if err != nil {
		return err
	}
	doc, err := config.ParseFile(file, data)
	if err != nil {
		return err
	}
	if err := config.Check(file, doc, Schema()); err != nil {
		return err
	}
	if _, err := config.LoadServers(file, doc); err != nil {
		return err
	}
	v.SetConfigFile(file)   // ConfigFileUsed names it (the servers section is read from it)
	v.SetConfigType("yaml") // YAML reads JSON too
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return &config.Error{File: file, Msg: err.Error()}
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Load reads the broker's configuration as `berth serve` does: the keys'
// defaults, the config file (FindConfig with named, from --config), the
// BERTH_ variables and the flags of fs (nil: none), highest last. The home
// is --home or BERTH_HOME, else the file's home key, else the default. It
// returns the file it read, with its notice.
func Load(fs *pflag.FlagSet, named string) (Config, ConfigFile, error) {
	v := NewViper()
	if fs != nil {
		if err := BindFlags(v, fs); err != nil {
			return Config{}, ConfigFile{}, err
		}
	}
	home := v.GetString("home") // the flag or the environment: the file may be in the home
	explicit := home != ""
	if !explicit {
		var err error
		if home, err = api.UserStateHome(); err != nil {
			return Config{}, ConfigFile{}, err
		}
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return Config{}, ConfigFile{}, err
	}
	cf, err := FindConfig(named, home)
	if err != nil {
		return Config{}, cf, err
	}
	if cf.Path != "" {
		if err := ReadConfig(v, cf.Path); err != nil {
			return Config{}, cf, err
		}
	}
	if h := strings.TrimSpace(v.GetString("home")); !explicit && h != "" {
		dirs, err := config.AbsDirs("home", "", []string{h}) // the file's: absolute or ~/...
		if err != nil {
			return Config{}, cf, &config.Error{File: cf.Path, Msg: err.Error()}
		}
		home = dirs[0]
	}
	cfg, err := ConfigFrom(v, home)
	return cfg, cf, err
}
