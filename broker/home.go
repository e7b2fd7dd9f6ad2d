package broker

import (
	"fmt"
	"os"
)

// secureHome makes home 0700 (it holds the token and the socket). When
// others could read or enter it before, it returns a warning saying so:
// what was there (the token, berth.db) may have been read.
func secureHome(home string) (string, error) {
	fi, err := os.Stat(home)
	if err != nil {
		return "", fmt.Errorf("home %s: %w", home, err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		return "", fmt.Errorf("secure home %s: %w", home, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Sprintf("home %s had mode %04o, open to other accounts: it is now 0700 (if it held a token, remove %s/token to get a new one at the next start with auth: token)",
			home, perm, home), nil
	}
	return "", nil
}
