package api

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// File names inside BERTH_HOME.
const (
	SocketName = "berth.sock"
	LockName   = "berth.lock"
	DBName     = "berth.db"
	LogName    = "berth.log"
	ConfigName = "config.yaml"
	// StoppedName is written by a broker stopped on purpose (`berth stop`,
	// a signal from a service manager) and removed by the next one: a shim
	// that loses its broker starts another only when this file is absent
	// (the broker crashed).
	StoppedName = "berth.stopped"
)

// HomeEnv names the environment variable that overrides the broker's home.
const HomeEnv = "BERTH_HOME"

// ConfigEnv names the environment variable that names the broker's config
// file, as `berth serve --config` does.
const ConfigEnv = "BERTH_CONFIG"

// DefaultHome is $BERTH_HOME, else UserStateHome.
func DefaultHome() (string, error) {
	if h := os.Getenv(HomeEnv); h != "" {
		return filepath.Abs(h)
	}
	return UserStateHome()
}

// UserStateHome is the home a broker has when nothing names one: the OS
// user state dir, ~/.local/state/berth on Linux ($XDG_STATE_HOME
// honoured), ~/Library/Application Support/berth on macOS.
func UserStateHome() (string, error) {
	if runtime.GOOS == "linux" {
		if x := os.Getenv("XDG_STATE_HOME"); x != "" {
			return filepath.Join(x, "berth"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find home directory: %w (set %s)", err, HomeEnv)
		}
		return filepath.Join(home, ".local", "state", "berth"), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find user config directory: %w (set %s)", err, HomeEnv)
	}
	return filepath.Join(dir, "berth"), nil
}

// SocketPath is the control socket inside home.
func SocketPath(home string) string { return filepath.Join(home, SocketName) }

// UserConfigFile is where the user's broker settings live when the broker
// has the default home: $XDG_CONFIG_HOME/berth/config.yaml when that is
// set, else the OS user config dir's (~/.config/berth/config.yaml on
// Linux, ~/Library/Application Support/berth/config.yaml on macOS).
func UserConfigFile() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "berth", ConfigName), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find your config directory: %w (set %s or XDG_CONFIG_HOME)", err, ConfigEnv)
	}
	return filepath.Join(dir, "berth", ConfigName), nil
}
