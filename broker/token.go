package broker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TokenName is the bearer-token file inside home (auth: token).
const TokenName = "token"

// loadToken reads $home/token, creating it (0600) with a random token first.
func loadToken(home string) (string, error) {
	p := filepath.Join(home, TokenName)
	raw, err := os.ReadFile(p)
	if err == nil {
		tok := strings.TrimSpace(string(raw))
		if len(tok) < 16 {
			return "", fmt.Errorf("token file %s is too short: delete it and restart to get a new one", p)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read token %s: %w", p, err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b[:])
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token %s: %w", p, err)
	}
	return tok, nil
}

// headers is what a client must send to a project port.
func (t *mounts) headers() map[string]string {
	if t.token == "" {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + t.token}
}
