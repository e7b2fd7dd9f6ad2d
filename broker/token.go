package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/broker/brokerconfig"
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
	tok := randomHex(32)
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token %s: %w", p, err)
	}
	return tok, nil
}

// brokerToken is the bearer token the TCP listeners admit: with auth:
// token, and always where the account check is off (tokenOnly: macOS, or
// --token-only), since the token is then the only way in. "" for none.
func brokerToken(cfg brokerconfig.Config, tokenOnly bool, log *slog.Logger) (string, error) {
	switch {
	case tokenOnly:
		log.Info("the account check is off: TCP listeners admit only the bearer token (sent in the state files' headers) and the dashboard's login links",
			"token_file", filepath.Join(cfg.Home, TokenName))
	case cfg.Auth != "token":
		return "", nil
	}
	return loadToken(cfg.Home)
}
