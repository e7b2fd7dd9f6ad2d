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

func (s *session) run(ctx context.Context) error {
	transport := strings.ToLower(s.opts.Transport)
	if transport == "" {
		transport = api.TransportDual
	}
	if !slices.Contains(api.StateTransports, transport) {
		return fmt.Errorf("--transport %q: use dual, stdio or http", s.opts.Transport)
	}
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
		return err
	}
	if place.Folder {
		s.log.Info("serving a folder in no project: the user's hosted servers, no standards", "root", place.Root)
	}
	root := place.Root
	home := s.opts.Home
	if home == "" {
		if home, err = api.DefaultHome(); err != nil {
			return err
		}
	}
	log := s.log.With("project", root)
	attach := func(ctx context.Context) error {
		as := s.opts.Autostart
		if s.att != nil && stoppedOnPurpose(home) {
			// The broker was stopped (`berth stop`, a service restart): this
			// shim waits for the next one instead of starting its own. A
			// broker that crashed left no mark: the shim starts another.
			as.Disabled = true
		}
		a, err := Attach(ctx, AttachOptions{Home: home, Root: root, Folder: place.Folder, Transport: transport, Autostart: as, Logger: log})
		if err != nil {
			return err
		}
		s.att = a
		log.Info("attached", "id", a.Resp.ID, "port", a.Resp.Port, "broker_pid", a.Resp.BrokerPID)
		return nil
	}
	if err := attach(ctx); err != nil {
		return err
	}
	first := true
	dial := func(ctx context.Context) (*websocket.Conn, error) {
		if !first {
			// Release the old lease if its broker is still there (best effort).
			_ = s.att.Detach(ctx)
			if err := attach(ctx); err != nil {
				return nil, err
			}
		}
		first = false
		bridge := "ws://berth/projects/" + url.PathEscape(s.att.Resp.ID) + "/mcp"
		if s.opts.Tools != "" {
			bridge += "?" + url.Values{api.ToolsParam: {s.opts.Tools}}.Encode()
		}
		conn, _, err := websocket.Dial(ctx, bridge, &websocket.DialOptions{
			HTTPClient:   s.att.Client.HTTP,
			HTTPHeader:   http.Header{api.LeaseHeader: {s.att.Resp.Lease}},
			Subprotocols: []string{"mcp"},
		})
		if err != nil {
			return nil, fmt.Errorf("open MCP stream to the broker: %w", err)
		}
		conn.SetReadLimit(MaxMessageBytes)
		return conn, nil
	}
	queued := s.queued
	s.queued = nil
	if transport == api.TransportHTTP {
		return hold(ctx, prepend(queued, s.lines), s.opts.Stdout, func() *Attachment { return s.att }, attach, log)
	}
	f := &forwarder{dial: dial, lines: prepend(queued, s.lines), out: s.opts.Stdout, log: log,
		initialize: hs.initialize, initialized: hs.initialized}
	if out, ok := s.opts.Stdout.(*os.File); ok {
		f.unread = unreadOf(out)
	}
	return f.run(ctx)
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
