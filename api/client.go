package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Client talks to a broker's control API. Every error answer comes back
// as an *Error: decide on its Code (errors.Is(err, CodeNotMounted)), never
// on its message.
type Client struct {
	// HTTP is the underlying client (dials the unix socket for NewUnixClient).
	HTTP *http.Client
	// Base is the URL prefix, e.g. "http://berth" for the socket.
	Base string
}

// NewUnixClient returns a client for the broker listening on socket.
func NewUnixClient(socket string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{HTTP: &http.Client{Transport: tr}, Base: "http://berth"}
}

// NewTCPClient returns a client for a broker's TCP listen address.
func NewTCPClient(addr string) *Client {
	return &Client{HTTP: &http.Client{}, Base: "http://" + addr}
}

// Health calls GET /health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.do(ctx, http.MethodGet, "/health", nil, &h)
}

// Projects calls GET /projects.
func (c *Client) Projects(ctx context.Context) ([]Project, error) {
	var l ProjectList
	return l.Projects, c.do(ctx, http.MethodGet, "/projects", nil, &l)
}

// Project calls GET /projects/{id}.
func (c *Client) Project(ctx context.Context, id string) (Project, error) {
	var p Project
	return p, c.do(ctx, http.MethodGet, "/projects/"+url.PathEscape(id), nil, &p)
}

// Attach calls POST /projects.
func (c *Client) Attach(ctx context.Context, req AttachRequest) (AttachResponse, error) {
	var r AttachResponse
	return r, c.do(ctx, http.MethodPost, "/projects", req, &r)
}

// Detach calls DELETE /projects/{id}; lease "" releases a CLI pin.
func (c *Client) Detach(ctx context.Context, id, lease string) error {
	path := "/projects/" + url.PathEscape(id)
	if lease != "" {
		path += "?lease=" + url.QueryEscape(lease)
	}
	return c.do(ctx, http.MethodDelete, path, nil, nil)
}

// Shutdown calls POST /shutdown (control socket only).
func (c *Client) Shutdown(ctx context.Context, req ShutdownRequest) (ShutdownResponse, error) {
	var r ShutdownResponse
	return r, c.do(ctx, http.MethodPost, "/shutdown", req, &r)
}

// DashboardLink calls POST /dashboard/link (control socket only): a
// one-time link that logs a browser into the dashboard.
func (c *Client) DashboardLink(ctx context.Context) (DashboardLink, error) {
	var l DashboardLink
	return l, c.do(ctx, http.MethodPost, "/dashboard/link", nil, &l)
}

// MCPURL is the project's MCP endpoint on this control API.
func (c *Client) MCPURL(id string) string { return c.Base + "/projects/" + url.PathEscape(id) + "/mcp" }

// maxAnswer is the largest answer the client reads.
const maxAnswer = 16 << 20

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if len(raw) > maxAnswer {
		return fmt.Errorf("%s %s: the broker's answer is larger than %d MiB, more than this client reads (ask for less: one project, one server)", method, path, maxAnswer>>20)
	}
	if resp.StatusCode/100 != 2 {
		return ParseError(resp.StatusCode, raw)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}
