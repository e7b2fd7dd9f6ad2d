package finder

import (
	"context"
	"fmt"
	"slices"

	"github.com/berth-dev/berth/project/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mode is what a session's tools/list holds.
type Mode string

// The modes, as mcp.tools_listing, the project URL's ?tools= and
// berth-shim's --tools name them.
const (
	ModeAll    Mode = config.ListingAll    // every tool
	ModeFinder Mode = config.ListingFinder // Berth's core tools, find_tools and call_tool
	ModeAuto   Mode = config.ListingAuto   // the finder past mcp.finder_threshold tools, unless the client searches tools itself
)

// ParseMode reads a mode a client asked for; "" is none.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "", ModeAll, ModeFinder, ModeAuto:
		return m, nil
	}
	return "", fmt.Errorf("tools=%q: use all, finder or auto", s)
}

type modeKey struct{}

// WithMode tags ctx with the mode a session's client asked for (the
// project URL's ?tools=, the shim's --tools); the SDK hands the context on
// to the session's requests.
func WithMode(ctx context.Context, m Mode) context.Context {
	if m == "" {
		return ctx
	}
	return context.WithValue(ctx, modeKey{}, m)
}

// modeAsked is the mode ctx was tagged with, or "".
func modeAsked(ctx context.Context) Mode {
	m, _ := ctx.Value(modeKey{}).(Mode)
	return m
}

// decide is the mode of a session: what its client asked for, else the
// project's mcp.tools_listing; auto lists every tool to clients that
// search tools themselves (finder.clients_with_tool_search) and while the
// project offers at most mcp.finder_threshold tools.
func decide(asked Mode, cfg config.Config, ss *mcp.ServerSession, tools int) Mode {
	m := asked
	if m == "" {
		m = Mode(cfg.MCP.ToolsListing)
	}
	if m != ModeAuto {
		if m == "" {
			return ModeAll
		}
		return m
	}
	if ss != nil {
		if init := ss.InitializeParams(); init != nil && init.ClientInfo != nil &&
			slices.Contains(cfg.Finder.ClientsWithToolSearch, init.ClientInfo.Name) {
			return ModeAll
		}
	}
	if tools > cfg.MCP.FinderThreshold {
		return ModeFinder
	}
	return ModeAll
}
