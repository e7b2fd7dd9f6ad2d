package lambdaproc

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
)

// FuzzLambda: any lambda, called with any evidence, ends with an outcome
// within its limits: the child's CPU and memory stay under them (with the
// tests' slack), and the broker's side of it within a request's budget.
func FuzzLambda(f *testing.F) {
	f.Add("lambda e: e.get('a', 0) > 1", `{"a": 2}`)
	f.Add("lambda e: len([0] * 500000000) > 0", `{}`)
	f.Add("lambda e: len(str(list(range(100000000)))) > 0", `{}`)
	f.Add("lambda e: sum(range(1000000000)) > 0", `{}`)
	f.Add("lambda e: re.search('(.{100})z', 'a' * 100000) != None", `{}`)
	f.Add("lambda e: yaml.safe_load(e['y']) != None", `{"y": "a: [1, 2, {b: c}]"}`)
	f.Add("lambda e, d=[0]*1000: True", `{}`)
	r := testRunner(DefaultLimits)
	f.Fuzz(func(t *testing.T, src, evidence string) {
		var ev map[string]any
		if json.Unmarshal([]byte(evidence), &ev) != nil {
			return
		}
		var res Result
		var err error
		start := time.Now()
		cost := workflowtest.MeasureQuick(func() { res, err = r.Run(context.Background(), batch(ev, src)) })
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Outcomes) != 1 {
			t.Fatalf("%d outcomes for one call", len(res.Outcomes))
		}
		workflowtest.Request.Check(t, "the broker's side of a lambda", cost)
		limits := r.Limits()
		memory := limits.Memory + workflowtest.Slack*workflowtest.Request.Memory
		if raceBuild {
			// A race build holds memory with the watchdog alone (race.go): on
			// a loaded machine one huge allocation (the [0] * 500000000 seed)
			// fills gigabytes before the watchdog's turn comes. The CPU bound
			// and the outcome still hold; the memory bound is the normal
			// build's, where RLIMIT_AS makes it hard.
			memory = math.MaxInt64
		}
		if res.CPU > workflowtest.Slack*limits.CPU || res.MaxRSS > memory {
			t.Fatalf("the child used %v of CPU and %d MiB", res.CPU, res.MaxRSS>>20)
		}
		t.Logf("the child used %v of CPU and %d MiB", res.CPU, res.MaxRSS>>20)
		if d := time.Since(start); d > limits.Timeout+10*time.Second {
			t.Fatalf("the call took %v", d)
		}
	})
}
