package broker

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
)

// Dashboard logins: `berth dashboard` asks the control socket for a
// one-time link, http://<listen>/#login=<code>. The page reads the code
// from the fragment (a browser never sends a fragment, so it is in no
// request line or log), redeems it once at POST /dashboard/login for a
// session key, keeps the key in the origin's localStorage and sends it as
// "Authorization: Bearer <key>" with each request. Keys are admitted on
// the control TCP listener only, until the broker stops.
//
// A cookie would be simpler and is not used: browsers send a cookie of
// 127.0.0.1 to every port of 127.0.0.1, another account's servers included.
const (
	loginTTL     = 2 * time.Minute
	maxLoginKeys = 64 // the oldest key is dropped past this
)

// logins holds the codes not yet redeemed and the session keys.
type logins struct {
	addr      string // the control listener's address; "" when listen is off
	tokenOnly bool   // the account check is off: the page and the login route are public

	mu    sync.Mutex
	codes map[string]time.Time // code -> expiry
	keys  []string             // "Bearer <key>", oldest first
}

func newLogins(addr string, tokenOnly bool) *logins {
	return &logins{addr: addr, tokenOnly: tokenOnly, codes: make(map[string]time.Time)}
}

// Link implements controlapi.Login.
func (l *logins) Link() (api.DashboardLink, error) {
	if l.addr == "" {
		return api.DashboardLink{}, api.Errorf(http.StatusConflict, api.CodeNoEndpoint,
			"the dashboard is served on the TCP control API, which is off (listen is empty): set listen, e.g. 127.0.0.1:4241, and restart the broker")
	}
	code := randomHex(32)
	now := time.Now()
	l.mu.Lock()
	for c, exp := range l.codes {
		if now.After(exp) {
			delete(l.codes, c)
		}
	}
	l.codes[code] = now.Add(loginTTL)
	l.mu.Unlock()
	return api.DashboardLink{URL: "http://" + l.addr + "/#login=" + code, ExpiresAt: now.Add(loginTTL).UTC()}, nil
}

// Redeem implements controlapi.Login.
func (l *logins) Redeem(code string) (api.DashboardSession, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.codes[code]
	delete(l.codes, code)
	if !ok || time.Now().After(exp) {
		return api.DashboardSession{}, api.Errorf(http.StatusForbidden, api.CodeLoginExpired,
			"this login link was used already or has expired (links last %s): run `berth dashboard` for a new one", loginTTL)
	}
	key := randomHex(32)
	l.keys = append(l.keys, "Bearer "+key)
	if len(l.keys) > maxLoginKeys {
		l.keys = l.keys[len(l.keys)-maxLoginKeys:]
	}
	return api.DashboardSession{Key: key}, nil
}

// admits is the control listener's peer.Options.Admit: a request with a
// session key; and, where the account check is off, the dashboard's page
// and files (no data: they are the binary's own) and the login route
// (which admits only a valid code).
func (l *logins) admits(r *http.Request) bool {
	if l.tokenOnly && publicDashboard(r) {
		return true
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range l.keys {
		if controlapi.HasBearer(r, []byte(k)) {
			return true
		}
	}
	return false
}

func publicDashboard(r *http.Request) bool {
	switch {
	case r.Method == http.MethodGet && (r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/assets/")):
		return true
	case r.Method == http.MethodPost && r.URL.Path == "/dashboard/login":
		return true
	}
	return false
}

// listenAddr is ln's address, or "" for none.
func listenAddr(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// randomHex is n random bytes in hex: tokens, keys, codes and leases.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux and macOS
	}
	return hex.EncodeToString(b)
}
