package shim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/berth-dev/berth/api"
)

// Attachment is a shim's hold on its project.
type Attachment struct {
	Client *api.Client
	Resp   api.AttachResponse
}

// AttachOptions configures Attach.
type AttachOptions struct {
	Home      string
	Root      string // resolved project root, or folder with Folder
	Folder    bool   // Root is in no project: ask the broker to serve it as a folder (api.AttachRequest.Folder)
	Transport string // api.TransportDual, TransportStdio or TransportHTTP: what the state file should offer
	Autostart Autostart
	Kind      string // api.HolderShim (default) or api.HolderCLI
	Logger    *slog.Logger
}

// Attach connects to the broker of opts.Home (starting it if absent) and
// attaches the project, saying which transport it uses: the broker writes
// the project's state file from every holder's. What the broker could not
// do (write that file) comes back as warnings, logged here. A broker that
// is stopping is waited for and replaced; an auto-started broker older
// than this program is asked to make way when nobody else uses it.
func Attach(ctx context.Context, opts AttachOptions) (*Attachment, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kind := opts.Kind
	if kind == "" {
		kind = api.HolderShim
	}
	var (
		c    *api.Client
		resp api.AttachResponse
		err  error
	)
	replaced := false
	for attempt := 1; ; attempt++ {
		if c, err = Connect(ctx, opts.Home, opts.Autostart); err != nil {
			return nil, err
		}
		resp, err = attachCompat(ctx, c, api.AttachRequest{Root: opts.Root, Kind: kind, PID: os.Getpid(), Version: api.Version, Protocol: api.Protocol(), Transport: opts.Transport, Folder: opts.Folder})
		if err != nil {
			if errors.Is(err, api.CodeShuttingDown) && attempt < maxStoppingRetries {
				// The broker is stopping: wait until it is gone, then start or find the next one.
				if err := waitGone(ctx, c, 0); err != nil {
					return nil, err
				}
				continue
			}
			if opts.Folder && errors.Is(err, api.CodeNotProject) {
				if h, herr := c.Health(ctx); herr == nil && h.Protocol < folderProtocol {
					return nil, fmt.Errorf("attach %s: the broker of Berth %s (protocol %d) is older than this shim and serves no folder without %s/: restart it (`berth stop`; the next window starts a new one): %w",
						opts.Root, h.Version, h.Protocol, api.ProjectDir, err)
				}
			}
			return nil, fmt.Errorf("attach %s: %w", opts.Root, err)
		}
		if replaced || resp.BrokerProtocol >= api.Protocol() {
			break
		}
		why := fmt.Sprintf("a shim of Berth %s (protocol %d) replaces the broker of Berth %s (protocol %d)", api.Version, api.Protocol(), resp.BrokerVersion, resp.BrokerProtocol)
		if _, serr := c.Shutdown(ctx, api.ShutdownRequest{Reason: why, IfUnheld: true, ExceptLease: resp.Lease}); serr != nil {
			log.Warn("the broker is older than this shim and keeps running (it may not write the project's state file); restart it when convenient (`berth stop`)",
				"broker_version", resp.BrokerVersion, "broker_protocol", resp.BrokerProtocol, "shim_version", api.Version, "shim_protocol", api.Protocol(), "why", serr)
			break
		}
		log.Info("asked the older broker to make way", "broker_version", resp.BrokerVersion, "shim_version", api.Version)
		if err := waitGone(ctx, c, resp.BrokerPID); err != nil {
			return nil, err
		}
		replaced = true
	}
	for _, w := range resp.Warnings {
		log.Warn(w)
	}
	return &Attachment{Client: c, Resp: resp}, nil
}

// attachCompat attaches. A broker older than error codes answers every
// error without a code and refuses fields it does not know ("version",
// "transport") with a 400: a 400 without a code is answered by sending
// the request again in its oldest form (a broker that refused it for
// another reason refuses it again), and the broker's version is read from
// /health instead.
func attachCompat(ctx context.Context, c *api.Client, req api.AttachRequest) (api.AttachResponse, error) {
	resp, err := c.Attach(ctx, req)
	var e *api.Error
	if err == nil || (req.Version == "" && req.Transport == "" && req.Protocol == 0) || !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code != "" {
		return resp, err
	}
	req.Version, req.Transport, req.Protocol = "", "", 0
	if resp, err = c.Attach(ctx, req); err != nil {
		return resp, err
	}
	if h, herr := c.Health(ctx); herr == nil && resp.BrokerVersion == "" {
		resp.BrokerVersion = h.Version
	}
	return resp, nil
}

// folderProtocol is the first protocol whose brokers serve folders in no
// project (api.AttachRequest.Folder).
const folderProtocol = 3

// maxStoppingRetries bounds how often Attach waits for a stopping broker.
const maxStoppingRetries = 5

// waitGone waits (at most 10 s) until the broker behind c no longer
// answers and, when pid is known, until that process has exited (it holds
// the home's lock until then).
func waitGone(ctx context.Context, c *api.Client, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	delay := 20 * time.Millisecond
	for {
		if (pid <= 0 || !api.ProcessAlive(pid)) && ping(ctx, c) != nil {
			c.HTTP.CloseIdleConnections()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the broker said it would stop but still answers after 10s: %w", ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

// Detach releases the hold; the broker keeps the mount for its grace period.
func (a *Attachment) Detach(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return a.Client.Detach(ctx, a.Resp.ID, a.Resp.Lease)
}
