package shim

import (
	"context"
	"fmt"
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
	Root      string // resolved project root
	Transport string // api.TransportDual, TransportStdio or TransportHTTP
	Autostart Autostart
	Kind      string // api.HolderShim (default) or api.HolderCLI
}

// Attach connects to the broker of opts.Home (starting it if absent),
// attaches the project and writes its state file.
func Attach(ctx context.Context, opts AttachOptions) (*Attachment, error) {
	c, err := Connect(ctx, opts.Home, opts.Autostart)
	if err != nil {
		return nil, err
	}
	kind := opts.Kind
	if kind == "" {
		kind = api.HolderShim
	}
	resp, err := c.Attach(ctx, api.AttachRequest{Root: opts.Root, Kind: kind, PID: os.Getpid()})
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", opts.Root, err)
	}
	a := &Attachment{Client: c, Resp: resp}
	if err := a.WriteState(opts.Transport); err != nil {
		_ = a.Detach(context.Background())
		return nil, err
	}
	return a, nil
}

// WriteState writes the project's state file for transport.
func (a *Attachment) WriteState(transport string) error {
	if transport == "" {
		transport = api.TransportDual
	}
	sf := api.NewStateFile(transport, a.Resp.Port, a.Resp.BrokerPID, a.Resp.StartedAt, a.Resp.Name, a.Resp.Root)
	sf.Headers = a.Resp.Headers
	if err := api.WriteStateFile(a.Resp.Root, sf); err != nil {
		return fmt.Errorf("write state file for %s: %w", a.Resp.Root, err)
	}
	return nil
}

// Detach releases the hold; the broker keeps the mount for its grace period.
func (a *Attachment) Detach(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return a.Client.Detach(ctx, a.Resp.ID, a.Resp.Lease)
}
