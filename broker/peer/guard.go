package peer

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/controlapi"
)

// Guard admits HTTP requests only on connections whose other end belongs
// to the account running this process, or that carry the bearer token. It
// looks a connection's owner up once, at its first request, and keeps the
// answer in the connection's context; further requests on an open
// connection (a session's stream, keep-alive calls) pay a context lookup.
// A WebSocket or SSE stream is an HTTP request first, so it is covered.
//
// Install it on an http.Server with [Guard.Install], or set
// [Guard.ConnContext] as the server's ConnContext and wrap its handler with
// [Guard.Wrap].
type Guard struct {
	owner    uint32
	token    []byte // "Bearer <token>"; nil = no token admits anyone
	admit    func(*http.Request) bool
	admitted func(net.Conn)
	budget   *Budget
	name     string
	log      *slog.Logger
	lookup   func(net.Conn) (uint32, error)

	missing sync.Once // logs a server without ConnContext once
}

// Options configure [NewGuard].
type Options struct {
	// Token, when set, admits a request with "Authorization: Bearer <Token>"
	// on any connection: the second key, for peers whose account cannot be
	// told (macOS, a container reaching the host) or differs.
	Token string
	// Admit, when set, is asked about a request neither the account check
	// nor the token admitted: true admits it (another key, such as the
	// dashboard's session keys). It is never asked about the owner's requests.
	Admit func(*http.Request) bool
	// TokenOnly skips the account check: only the token and Admit admit,
	// as on systems that cannot tell a connection's account.
	TokenOnly bool
	// Name names the listener in log lines ("control", a project id).
	Name string
	// Logger receives one line per refused connection; nil discards.
	Logger *slog.Logger
	// Budget, when set, bounds the connections not yet known to be the
	// owner's (see [Budget]); serve [Guard.Listener] for it to apply.
	Budget *Budget
	// Admitted, when set, is called once for each connection at its first
	// admitted request (the owner's, the token's or Admit's), with the
	// net.Conn the server was given: refused connections never reach it.
	Admitted func(net.Conn)
}

// NewGuard returns a guard that admits the account running this process.
func NewGuard(o Options) *Guard {
	g := &Guard{owner: uint32(os.Getuid()), admit: o.Admit, admitted: o.Admitted, budget: o.Budget, name: o.Name, log: o.Logger, lookup: ConnOwner}
	if o.TokenOnly || !Supported() {
		g.lookup = unsupported
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if o.Token != "" {
		g.token = []byte("Bearer " + o.Token)
	}
	return g
}

// conn is an accepted connection with its verdict, computed at its first
// request (or as it is accepted, past the budget).
type conn struct {
	net.Conn
	once     sync.Once
	uid      uint32
	err      error
	logged   atomic.Bool            // a refusal has been logged
	welcomed atomic.Bool            // Admitted was called
	counted  atomic.Pointer[Budget] // the budget it counts in, until it is known or closed
}

// known gives the connection's place in the budget back: it is the owner's.
func (c *conn) known() {
	if b := c.counted.Swap(nil); b != nil {
		b.give()
	}
}

// Close closes the connection and gives its place in the budget back.
func (c *conn) Close() error {
	c.known()
	return c.Conn.Close()
}

// CloseWrite half-closes a TCP connection, as the HTTP server does before
// it closes one whose request it did not read to the end.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

type connKey struct{}

// ConnContext is for http.Server.ConnContext: it tags ctx with the
// connection, whose owner is looked up at its first request (not here: the
// server's accept loop calls this and must not wait for the kernel).
func (g *Guard) ConnContext(ctx context.Context, c net.Conn) context.Context {
	pc, ok := c.(*conn)
	if !ok {
		pc = &conn{Conn: c}
	}
	return context.WithValue(ctx, connKey{}, pc)
}

// Install sets srv's ConnContext (calling the one it had first) and wraps
// its handler. Call it once srv.Handler is set and before srv serves.
func (g *Guard) Install(srv *http.Server) {
	prev := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		return g.ConnContext(ctx, c)
	}
	h := srv.Handler
	if h == nil {
		h = http.DefaultServeMux
	}
	srv.Handler = g.Wrap(h)
}

// Wrap admits requests from the owner's connections and requests with the
// token; every other request gets 403 with a JSON error, and the
// connection is closed after the answer. When the guard has a token, a
// request that presents a bearer credential is decided by it alone: the
// token (or a key Admit knows) admits it, anything else gets 401 whoever
// sends it, the owner included, so a client with a stale or mistyped
// token hears of it on every system, not only where the token is the only
// key.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pc, _ := r.Context().Value(connKey{}).(*conn)
		var uid uint32
		var err error
		if pc == nil {
			err = errNoConnContext
			g.missing.Do(func() {
				g.log.Error("peer guard: the server has no ConnContext; every request needs the token", "listener", g.name)
			})
		} else {
			pc.once.Do(func() { pc.uid, pc.err = g.lookup(pc.Conn) })
			uid, err = pc.uid, pc.err
		}
		if g.token != nil && presentsBearer(r) {
			// A credential decides alone: good, it admits anyone; wrong, it
			// is refused whoever sends it.
			switch {
			case controlapi.HasBearer(r, g.token):
				g.welcome(pc, true)
				next.ServeHTTP(w, r)
			case g.admit != nil && g.admit(r):
				g.welcome(pc, false)
				next.ServeHTTP(w, r)
			default:
				g.unauthorized(w, r, pc, uid, err)
			}
			return
		}
		if err == nil && uid == g.owner || controlapi.HasBearer(r, g.token) {
			g.welcome(pc, true)
			next.ServeHTTP(w, r)
			return
		}
		if g.admit != nil && g.admit(r) {
			g.welcome(pc, false)
			next.ServeHTTP(w, r)
			return
		}
		g.refuse(w, r, pc, uid, err)
	})
}

// welcome notes an admitted request's connection: known (the owner's or
// the token's) gives its place in the budget back; Admitted hears of it once.
func (g *Guard) welcome(pc *conn, known bool) {
	if pc == nil {
		return
	}
	if known {
		pc.known()
	}
	if g.admitted != nil && !pc.welcomed.Swap(true) {
		g.admitted(pc)
	}
}

func unsupported(net.Conn) (uint32, error) { return 0, ErrUnsupported }

// presentsBearer reports whether r carries a bearer credential.
func presentsBearer(r *http.Request) bool {
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "Bearer")
}

// unauthorized answers 401 to a request with a wrong token and logs the
// connection once: the peer's uid when known and its address; nothing it
// sent.
func (g *Guard) unauthorized(w http.ResponseWriter, r *http.Request, pc *conn, uid uint32, err error) {
	if pc == nil || !pc.logged.Swap(true) {
		attrs := []any{"listener", g.name, "remote", r.RemoteAddr}
		if err == nil {
			attrs = append(attrs, "peer_uid", uid)
		}
		g.log.Warn("refused a connection with a wrong bearer token", attrs...)
	}
	// Closed after the answer, as a refused connection is.
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	w.Header().Set("WWW-Authenticate", `Bearer realm="berth"`)
	controlapi.WriteError(w, api.Errorf(http.StatusUnauthorized, api.CodeUnauthorized,
		"the bearer token is not this broker's: send the headers of the project's state file as they are now (the token is in BERTH_HOME/token), or no Authorization header from the broker's own account"))
}

var errNoConnContext = errors.New("peer guard: no connection in the request context (set the server's ConnContext)")

// refuse answers 403 and logs the connection once: the peer's uid or why
// it is unknown, and its address; nothing it sent.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, pc *conn, uid uint32, err error) {
	first := pc == nil || !pc.logged.Swap(true)
	var msg string
	if err == nil {
		msg = "this Berth broker serves only the account that runs it; connect as that account"
		if first {
			g.log.Warn("refused a connection from another account", "listener", g.name, "peer_uid", uid, "remote", r.RemoteAddr)
		}
	} else {
		msg = "cannot tell which account this connection comes from: send the bearer token (the headers of the project's state file), " +
			"or open the dashboard with the link `berth dashboard` prints"
		if first {
			g.log.Warn("refused a connection whose account is unknown and that sent no valid token", "listener", g.name, "remote", r.RemoteAddr, "err", err)
		}
	}
	// Closed at once after the answer: the server reads nothing more of
	// what it sent (a body it stalls included).
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	controlapi.WriteError(w, api.Errorf(http.StatusForbidden, api.CodeNotOwner, "%s", msg))
}
