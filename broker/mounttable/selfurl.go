package mounttable

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/berth-dev/berth/broker/brokerconfig"
)

// resolveTimeout bounds the name lookup of a hosted server's url.
const resolveTimeout = 5 * time.Second

// selfURLs returns the check of a hosted server's url that refuses one
// naming the broker itself: a host that is this machine (a loopback or
// unspecified address, one of its interfaces' addresses, or a name that
// resolves to one) with a port of the broker's own listeners, its control
// API (listen) or its project ports (ports.start..ports.end). Such a
// server would serve Berth's tools back to Berth, every listing growing
// the next (a project that names its own endpoint reached 24,000 tools
// and 2.4 GiB within a minute).
func selfURLs(cfg brokerconfig.Config) func(ctx context.Context, server, rawURL string) error {
	var listenPort int
	if _, p, err := net.SplitHostPort(cfg.Listen); err == nil && cfg.Listen != "" {
		listenPort, _ = strconv.Atoi(p)
	}
	return func(ctx context.Context, server, rawURL string) error {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil // the connection reports it
		}
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
		var which string
		switch {
		case port >= cfg.PortStart && port <= cfg.PortEnd:
			which = fmt.Sprintf("inside its project ports %d-%d (ports.start, ports.end)", cfg.PortStart, cfg.PortEnd)
		case port == listenPort:
			which = fmt.Sprintf("its control API (listen %s)", cfg.Listen)
		default:
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		defer cancel()
		addr, local := localAddress(ctx, u.Hostname())
		if !local {
			return nil
		}
		return fmt.Errorf("servers.%s.url %s points at Berth itself: %s is this machine (%s) and port %d is %s; "+
			"a hosted server there would serve Berth's own tools back to it. Point url at another MCP server, or move that server to a port outside %d-%d",
			server, rawURL, u.Hostname(), addr, port, which, cfg.PortStart, cfg.PortEnd)
	}
}

// localAddress reports whether host is, or resolves to, an address of
// this machine, and which. A name that does not resolve is not local: the
// connection will fail on its own.
func localAddress(ctx context.Context, host string) (netip.Addr, bool) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return netip.Addr{}, false
	}
	var mine []netip.Addr
	if ifaddrs, err := net.InterfaceAddrs(); err == nil {
		for _, ia := range ifaddrs {
			if p, err := netip.ParsePrefix(ia.String()); err == nil {
				mine = append(mine, p.Addr().Unmap())
			}
		}
	}
	for _, a := range addrs {
		a = a.Unmap()
		if a.IsLoopback() || a.IsUnspecified() {
			return a, true
		}
		for _, m := range mine {
			if a == m {
				return a, true
			}
		}
	}
	return netip.Addr{}, false
}
