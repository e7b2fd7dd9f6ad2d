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
)

// HomeEnv names the environment variable that overrides the broker's home.
const HomeEnv = "BERTH_HOME"

// DefaultHome is $BERTH_HOME, else the OS user state dir: ~/.local/state/berth
// on Linux ($XDG_STATE_HOME honoured), ~/Library/Application Support/berth on macOS.
func DefaultHome() (string, error) {
	if h := os.Getenv(HomeEnv); h != "" {
		return filepath.Abs(h)
	}
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
