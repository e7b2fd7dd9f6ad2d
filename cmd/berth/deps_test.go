package main

import (
	"slices"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
)

// banned are packages only tests and the benchmarks use: the product
// binary never links them. (The standard library's testing package is not
// among them: two dependencies, snowball and go-abnf, import it.)
var banned = []string{
	"github.com/berth-dev/berth/broker/brokertest",
	"github.com/berth-dev/berth/broker/peer/peertest", // the second account and its probe
	"github.com/berth-dev/berth/cmd/berth-bench",
	"github.com/berth-dev/berth/project/budgettest",
	"github.com/blevesearch",   // the search benchmarks' reference engine
	"github.com/chromedp",      // the dashboard's browser test
	"github.com/google/go-cmp", // test diffs
	"github.com/prometheus/client_golang/prometheus/testutil",
	"golang.org/x/tools",
}

func TestBerthLinksNoTestOrBenchmarkPackages(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		deps := brokertest.Deps(t, "github.com/berth-dev/berth/cmd/berth", goos)
		if !slices.Contains(deps, brokertest.Dep{Path: "github.com/berth-dev/berth/broker"}) {
			t.Fatalf("GOOS=%s: the list %v does not even hold the broker: go list answered something else", goos, deps)
		}
		for _, dep := range deps {
			if brokertest.Within(dep.Path, banned...) {
				t.Errorf("GOOS=%s: berth links %s, a test or benchmark package", goos, dep.Path)
			}
		}
	}
}
