package hosted

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// watchers are the sessions (of every project holding an upstream) that
// subscribed to its resources, and the projects relaying its
// notifications/resources/updated. mu is a leaf: nothing is called while
// it is held.
type watchers struct {
	mu       sync.Mutex
	uris     map[string]map[*mcp.ServerSession]bool // uri -> subscribed sessions
	sessions map[*mcp.ServerSession]bool            // sessions a goroutine waits on
	relays   map[int]func(uri string)
	nextID   int
}

// add records ss as subscribed to uri; added is false when it already was,
// and watch is true the first time this upstream sees ss.
func (w *watchers) add(uri string, ss *mcp.ServerSession) (added, watch bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.uris == nil {
		w.uris, w.sessions = map[string]map[*mcp.ServerSession]bool{}, map[*mcp.ServerSession]bool{}
	}
	if w.uris[uri] == nil {
		w.uris[uri] = map[*mcp.ServerSession]bool{}
	}
	added, watch = !w.uris[uri][ss], !w.sessions[ss]
	w.uris[uri][ss], w.sessions[ss] = true, true
	return added, watch
}

// remove forgets ss's subscription to uri and reports whether no session
// wants uri any more.
func (w *watchers) remove(uri string, ss *mcp.ServerSession) (last bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	subs := w.uris[uri]
	if !subs[ss] {
		return false
	}
	delete(subs, ss)
	if len(subs) > 0 {
		return false
	}
	delete(w.uris, uri)
	return true
}

// drop forgets every subscription of a session that ended and returns the
// URIs no session wants any more.
func (w *watchers) drop(ss *mcp.ServerSession) (unwanted []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.sessions, ss)
	for uri, subs := range w.uris {
		if subs[ss] {
			delete(subs, ss)
			if len(subs) == 0 {
				delete(w.uris, uri)
				unwanted = append(unwanted, uri)
			}
		}
	}
	return unwanted
}

// wanted lists the URIs some session is subscribed to.
func (w *watchers) wanted() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sortedKeys(w.uris)
}

// isWanted reports whether some session is subscribed to uri.
func (w *watchers) isWanted(uri string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.uris[uri]) > 0
}

// relay calls f with the URI of every notifications/resources/updated the
// server sends for a wanted URI, until the returned func is called. f must
// not hold up the upstream for long: it runs on its connection's reader.
func (w *watchers) relay(f func(uri string)) (cancel func()) {
	return listen(&w.mu, &w.relays, &w.nextID, f)
}

// resourceUpdated passes the server's notifications/resources/updated on
// to the projects holding it (their MCP servers send it to the sessions
// subscribed to the URI).
func (u *upstream) resourceUpdated(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req.Params == nil || !u.watch.isWanted(req.Params.URI) {
		return
	}
	u.watch.mu.Lock()
	relays := make([]func(string), 0, len(u.watch.relays))
	for _, f := range u.watch.relays {
		relays = append(relays, f)
	}
	u.watch.mu.Unlock()
	for _, f := range relays {
		f(req.Params.URI)
	}
}

// noSubscribe is the answer for a server that does not declare
// resources.subscribe.
func (t *target) noSubscribe() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("hosted server %q does not support resource subscriptions", t.name)}
}

func canSubscribe(cs *mcp.ClientSession) bool {
	res := cs.InitializeResult()
	return res != nil && res.Capabilities != nil && res.Capabilities.Resources != nil && res.Capabilities.Resources.Subscribe
}

// subscribe forwards resources/subscribe of session ss to the upstream and
// records it, so that a restarted server is subscribed again and the
// upstream subscription ends with the last session that wanted it.
func (t *target) subscribe(ctx context.Context, ss *mcp.ServerSession, uri string) error {
	u := t.up
	added, watch := u.watch.add(uri, ss)
	_, err := forward(ctx, t, ss, "resources/subscribe", uri, nil,
		func(ctx context.Context, g *generation, _ *caller) (struct{}, error) {
			cs := g.cs
			if !canSubscribe(cs) {
				return struct{}{}, t.noSubscribe()
			}
			return struct{}{}, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		})
	if err != nil {
		if added {
			u.watch.remove(uri, ss)
		}
		return err
	}
	if watch && ss != nil {
		go func() { // one per session and upstream, until the session ends
			ss.Wait()
			u.unsubscribeUpstream(u.watch.drop(ss)...)
		}()
	}
	return nil
}

// unsubscribe forgets ss's subscription to uri; once no session wants it,
// the upstream is told too. A failure there is only logged: the session is
// unsubscribed either way, and a leftover upstream subscription only costs
// notifications that reach no one.
func (t *target) unsubscribe(ss *mcp.ServerSession, uri string) {
	if t.up.watch.remove(uri, ss) {
		t.up.unsubscribeUpstream(uri)
	}
}

// unsubscribeUpstream sends resources/unsubscribe for uris to the running
// generation, if any (a server that is not running has no subscriptions,
// and one that starts is subscribed only to the URIs still wanted).
func (u *upstream) unsubscribeUpstream(uris ...string) {
	if len(uris) == 0 {
		return
	}
	u.mu.Lock()
	g := u.gen
	u.mu.Unlock()
	if g == nil || g.isEnded() || !canSubscribe(g.cs) {
		return
	}
	ctx, cancel := context.WithTimeout(u.ctx, u.opts.StartTimeout)
	defer cancel()
	for _, uri := range uris {
		if u.watch.isWanted(uri) { // subscribed again meanwhile
			continue
		}
		if err := g.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			u.log.Debug("hosted server: resources/unsubscribe failed", "server", u.label, "uri", uri, "err", err)
		}
	}
}

// resubscribe subscribes a new generation (a restart) to the URIs sessions
// still want.
func (u *upstream) resubscribe(g *generation) {
	uris := u.watch.wanted()
	if len(uris) == 0 {
		return
	}
	if !canSubscribe(g.cs) {
		u.log.Warn("hosted server no longer supports resource subscriptions; subscribed sessions get no updates", "server", u.label, "uris", len(uris))
		return
	}
	ctx, cancel := context.WithTimeout(u.ctx, u.opts.StartTimeout)
	defer cancel()
	for _, uri := range uris {
		if err := g.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			u.log.Warn("hosted server: subscribe again after a restart failed", "server", u.label, "uri", uri, "err", err)
		}
	}
}

// Subscribe forwards resources/subscribe for a URI one of the project's
// hosted servers serves (listed, or matching one of its resource
// templates) to that server. handled is false for any other URI, which
// the caller answers itself (resource not found). A server that does not
// declare resources.subscribe gets an error naming it.
func (p *Project) Subscribe(ctx context.Context, req *mcp.SubscribeRequest) (handled bool, err error) {
	t := p.resourceTarget(req.Params.URI)
	if t == nil {
		// The installed surface may lag a server that just started (the
		// project's watch applies it): bring it in step and look again.
		p.sync()
		if t = p.resourceTarget(req.Params.URI); t == nil {
			return false, nil
		}
	}
	return true, t.subscribe(ctx, req.Session, req.Params.URI)
}

// Unsubscribe ends the session's subscription to a hosted server's URI;
// the server is told once no session (of any project holding it) is
// subscribed any more. handled is false for a URI no hosted server serves.
func (p *Project) Unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) (handled bool) {
	t := p.resourceTarget(req.Params.URI)
	if t == nil {
		return false
	}
	t.unsubscribe(req.Session, req.Params.URI)
	return true
}

// resourceTarget is the server serving uri here, or nil.
func (p *Project) resourceTarget(uri string) *target {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.resources[uri]; t != nil {
		return t
	}
	for _, tmpl := range sortedKeys(p.templates) {
		if re, err := uritemplate.New(tmpl); err == nil && re.Regexp().MatchString(uri) {
			return p.templates[tmpl]
		}
	}
	return nil
}

// relayUpdated returns the relay of t's resource updates to the project's
// MCP servers, for the URIs t serves here (another server's URI that
// shadows t's is not t's to announce).
func (p *Project) relayUpdated(t *target) func(uri string) {
	return func(uri string) {
		if p.resourceTarget(uri) != t {
			return
		}
		p.mu.Lock()
		servers := make([]*mcp.Server, 0, len(p.servers))
		for srv := range p.servers {
			servers = append(servers, srv)
		}
		p.mu.Unlock()
		for _, srv := range servers {
			if err := srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				p.spec.Log.Debug("hosted resource update not delivered", "uri", uri, "err", err)
			}
		}
	}
}
