package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/coder/websocket"
)

// Options configures Run.
type Options struct {
	Project   string // --project; else FindProject's other sources, else the IDE's roots
	Transport string // dual (default), stdio or http: what this window asks the state file to offer
	Home      string // broker home; "" = api.DefaultHome()
	Tools     string // --tools: all, finder or auto (api.ToolsParam); "" = the project's mcp.tools_listing
	Autostart Autostart
	Stdin     io.Reader
	Stdout    io.Writer
	Logger    *slog.Logger
}

// Run is the shim's whole life. It returns nil when the IDE closes stdin.
// When it cannot serve (no project, a broker that cannot be reached or
// refuses the project), it answers the IDE's requests with a JSON-RPC
// error naming the problem and the fix before it returns that error.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchParent(ctx, cancel)
	lines := make(chan []byte)
	go readLines(opts.Stdin, lines, ctx.Done(), log)

	s := &session{opts: opts, log: log, lines: lines}
	err := s.run(ctx)
	var orphan errOrphaned
	switch {
	case errors.As(context.Cause(ctx), &orphan):
		log.Info("parent process exited: stopping", "parent_was", orphan.was, "parent_now", orphan.now)
		err = nil
	case err != nil && ctx.Err() == nil:
		refuse(ctx, s.lines, s.queued, opts.Stdout, err)
	}
	if s.att != nil {
		if derr := s.att.Detach(context.WithoutCancel(ctx)); derr != nil {
			log.Debug("detach", "err", derr)
		}
	}
	return err
}

// session is one run of the shim: the IDE's lines, the attachment, and
// what was read from the IDE before the broker was reached.
type session struct {
	opts   Options
	log    *slog.Logger
	lines  <-chan []byte
	queued [][]byte // lines read and not yet handled (forwarded or refused)
	att    *Attachment
}

// run serves the IDE, in order: the transport this window asks for, the
// project it serves, the attachment to the broker, then the serving itself.
func (s *session) run(ctx context.Context) error {
	transport, err := s.transport()
	if err != nil {
		return err
	}
	place, hs, err := s.locate(ctx, transport)
	if err != nil {
		return err
	}
	home := s.opts.Home
	if home == "" {
		if home, err = api.DefaultHome(); err != nil {
			return err
		}
	}
	l := &link{s: s, home: home, place: place, transport: transport, log: s.log.With("project", place.Root)}
	if err := l.attach(ctx); err != nil {
		return err
	}
	return s.serve(ctx, transport, hs, l)
}

// transport is what this window asks the state file to offer: --transport,
// by default dual.
func (s *session) transport() (string, error) {
	transport := strings.ToLower(s.opts.Transport)
	if transport == "" {
		transport = api.TransportDual
	}
	if !slices.Contains(api.StateTransports, transport) {
		return "", fmt.Errorf("--transport %q: use dual, stdio or http", s.opts.Transport)
	}
	return transport, nil
}

// locate finds the project to serve: the one FindProject names, else one
// among the IDE's workspace folders (MCP roots; not with --transport http),
// else the working directory as a folder in no project. hs is what the
// roots' handshake read of the IDE.
func (s *session) locate(ctx context.Context, transport string) (Place, handshake, error) {
	place, err := FindProject(s.opts.Project, s.log)
	var hs handshake
	if errors.Is(err, errNoProject) && transport != api.TransportHTTP {
		place, hs, err = rootsProject(ctx, s.lines, s.opts.Stdout, err)
		s.queued = hs.queued
		if err == nil {
			s.log.Info("found among the IDE's workspace folders (MCP roots)", "root", place.Root, "folder", place.Folder)
		}
	}
	var nr noRoots
	if errors.As(err, &nr) || (errors.Is(err, errNoProject) && transport == api.TransportHTTP) {
		// Nothing names a project nor a workspace folder: the working
		// directory is where the IDE started the shim.
		place, err = WorkingFolder(err)
	}
	if err != nil {
		return Place{}, hs, err
	}
	if place.Folder {
		s.log.Info("serving a folder in no project: the user's hosted servers, no standards", "root", place.Root)
	}
	return place, hs, nil
}

// serve holds the attachment for http, else forwards the IDE's MCP
// messages to the broker, the lines read so far first.
func (s *session) serve(ctx context.Context, transport string, hs handshake, l *link) error {
	queued := s.queued
	s.queued = nil
	if transport == api.TransportHTTP {
		return hold(ctx, prepend(queued, s.lines), s.opts.Stdout, func() *Attachment { return s.att }, l.attach, l.log)
	}
	f := &forwarder{dial: l.dial, lines: prepend(queued, s.lines), out: s.opts.Stdout, log: l.log,
		initialize: hs.initialize, initialized: hs.initialized}
	if out, ok := s.opts.Stdout.(*os.File); ok {
		f.unread = unreadOf(out)
	}
	return f.run(ctx)
}

// link attaches the session's project to the broker (s.att) and opens its
// MCP streams, attaching again for each stream after the first.
type link struct {
	s         *session
	home      string
	place     Place
	transport string
	log       *slog.Logger
	dialed    bool // a stream was opened: the next dial attaches again
}

// attach attaches the project, starting a broker unless the last one was
// stopped on purpose.
func (l *link) attach(ctx context.Context) error {
	as := l.s.opts.Autostart
	if l.s.att != nil && stoppedOnPurpose(l.home) {
		// The broker was stopped (`berth stop`, a service restart): this
		// shim waits for the next one instead of starting its own. A
		// broker that crashed left no mark: the shim starts another.
		as.Disabled = true
	}
	a, err := Attach(ctx, AttachOptions{Home: l.home, Root: l.place.Root, Folder: l.place.Folder, Transport: l.transport, Autostart: as, Logger: l.log})
	if err != nil {
		return err
	}
	l.s.att = a
	l.log.Info("attached", "id", a.Resp.ID, "port", a.Resp.Port, "broker_pid", a.Resp.BrokerPID)
	return nil
}

// dial opens a WebSocket to the project's MCP endpoint on the broker; each
// after the first releases the old lease and attaches again.
func (l *link) dial(ctx context.Context) (*websocket.Conn, error) {
	if l.dialed {
		// Release the old lease if its broker is still there (best effort).
		_ = l.s.att.Detach(ctx)
		if err := l.attach(ctx); err != nil {
			return nil, err
		}
	}
	l.dialed = true
	att := l.s.att
	bridge := "ws://berth/projects/" + url.PathEscape(att.Resp.ID) + "/mcp"
	if l.s.opts.Tools != "" {
		bridge += "?" + url.Values{api.ToolsParam: {l.s.opts.Tools}}.Encode()
	}
	conn, _, err := websocket.Dial(ctx, bridge, &websocket.DialOptions{
		HTTPClient:   att.Client.HTTP,
		HTTPHeader:   http.Header{api.LeaseHeader: {att.Resp.Lease}},
		Subprotocols: []string{"mcp"},
	})
	if err != nil {
		return nil, fmt.Errorf("open MCP stream to the broker: %w", err)
	}
	conn.SetReadLimit(MaxMessageBytes)
	return conn, nil
}

// prepend delivers queued, then what lines delivers.
func prepend(queued [][]byte, lines <-chan []byte) <-chan []byte {
	if len(queued) == 0 {
		return lines
	}
	out := make(chan []byte)
	go func() {
		defer close(out)
		for _, l := range queued {
			out <- l
		}
		for l := range lines {
			out <- l
		}
	}()
	return out
}

// stoppedOnPurpose says whether the last broker of home was stopped on
// purpose (it left api.StoppedName) rather than lost.
func stoppedOnPurpose(home string) bool {
	_, err := os.Stat(filepath.Join(home, api.StoppedName))
	return err == nil
}
