package shim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/coder/websocket"
)

// Options configures Run.
type Options struct {
	Project   string // --project; else $PROJECT_ROOT; else the nearest ancestor with .praxis-os/
	Transport string // dual (default), stdio or http: what this window asks the state file to offer
	Home      string // broker home; "" = api.DefaultHome()
	Autostart Autostart
	Stdin     io.Reader
	Stdout    io.Writer
	Logger    *slog.Logger
}

// Run is the shim's whole life. It returns nil when the IDE closes stdin.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	transport := strings.ToLower(opts.Transport)
	if transport == "" {
		transport = api.TransportDual
	}
	if !slices.Contains(api.StateTransports, transport) {
		return fmt.Errorf("--transport %q: use dual, stdio or http", opts.Transport)
	}
	root, err := FindProject(opts.Project)
	if err != nil {
		return err
	}
	home := opts.Home
	if home == "" {
		if home, err = api.DefaultHome(); err != nil {
			return err
		}
	}
	log = log.With("project", root)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchParent(ctx, cancel)

	var att *Attachment
	attach := func(ctx context.Context) error {
		a, err := Attach(ctx, AttachOptions{Home: home, Root: root, Transport: transport, Autostart: opts.Autostart, Logger: log})
		if err != nil {
			return err
		}
		att = a
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
			_ = att.Detach(ctx)
			if err := attach(ctx); err != nil {
				return nil, err
			}
		}
		first = false
		conn, _, err := websocket.Dial(ctx, "ws://berth/projects/"+att.Resp.ID+"/mcp", &websocket.DialOptions{
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
	var runErr error
	if transport == api.TransportHTTP {
		runErr = hold(ctx, opts.Stdin, opts.Stdout, func() *Attachment { return att }, attach, log)
	} else {
		f := &forwarder{dial: dial, in: opts.Stdin, out: opts.Stdout, log: log}
		runErr = f.run(ctx)
	}
	var orphan errOrphaned
	if errors.As(context.Cause(ctx), &orphan) {
		log.Info("parent process exited: stopping", "parent_was", orphan.was, "parent_now", orphan.now)
		runErr = nil
	}
	if att != nil {
		if err := att.Detach(context.WithoutCancel(ctx)); err != nil {
			log.Debug("detach", "err", err)
		}
	}
	return runErr
}

// FindProject resolves the project root: flag, else $PROJECT_ROOT, else the
// nearest ancestor of the working directory holding .praxis-os/.
func FindProject(flag string) (string, error) {
	if flag != "" {
		return api.ResolveRoot(flag)
	}
	if env := os.Getenv("PROJECT_ROOT"); env != "" {
		return api.ResolveRoot(env)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return api.FindRoot(wd)
}
