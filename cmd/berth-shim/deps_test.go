package main

import (
	"slices"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

// allowed is all that berth-shim may link besides the standard library:
// the contract, the shim itself and the WebSocket library (which needs
// nothing but the standard library). The IDE starts a shim per window, so
// it stays small and starts fast; it never links the engine, the store,
// the broker or the MCP SDK.
var allowed = []string{
	"github.com/berth-dev/berth/cmd/berth-shim",
	"github.com/berth-dev/berth/api",
	"github.com/berth-dev/berth/shim",
	"github.com/coder/websocket",
}

func TestShimLinksOnlyItsAllowList(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		deps := brokertest.Deps(t, "github.com/berth-dev/berth/cmd/berth-shim", goos)
		if !slices.Contains(deps, brokertest.Dep{Path: "github.com/berth-dev/berth/api"}) {
			t.Fatalf("GOOS=%s: the list %v does not even hold api: go list answered something else", goos, deps)
		}
		for _, dep := range deps {
			if !dep.Standard && !brokertest.Within(dep.Path, allowed...) {
				t.Errorf("GOOS=%s: berth-shim links %s, which is not in its allow-list", goos, dep.Path)
			}
		}
	}
}
