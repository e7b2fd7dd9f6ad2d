package lambdaproc

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/project/workflow/pylambda"
	"github.com/berth-dev/berth/project/workflow/workflowtest"
)

// TestMain lets this test binary serve as the child of its own tests.
func TestMain(m *testing.M) {
	RunIfChild()
	os.Exit(m.Run())
}

// testRunner starts this test binary as the child.
func testRunner(limits Limits) *Runner {
	if limits == DefaultLimits {
		limits.CPU *= workflowtest.RaceSlack
		limits.Timeout *= workflowtest.RaceSlack
	}
	return New([]string{os.Args[0], ChildCommand}, limits, 2)
}

// batch calls each lambda once as a rule on ev.
func batch(ev map[string]any, lambdas ...string) pylambda.Batch {
	b := pylambda.Batch{Lambdas: lambdas, Evidence: ev}
	for i := range lambdas {
		b.Calls = append(b.Calls, pylambda.Call{Lambda: i})
	}
	return b
}

func TestRunsABatchInAChild(t *testing.T) {
	r := testRunner(DefaultLimits)
	b := batch(map[string]any{"goals": 2.0, "stories": 4.0, "note": "done"},
		"lambda e: e['stories'] >= e['goals']",
		"lambda e: e['goals'] > 5",
		"lambda e: e['missing'] > 0",
	)
	b.Lambdas = append(b.Lambdas, "lambda x, minimum: x >= minimum")
	b.Calls = append(b.Calls, pylambda.Call{Lambda: 3, Field: "stories", Kwargs: map[string]any{"minimum": 3}})
	res, err := r.Run(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "" || len(res.Outcomes) != 4 {
		t.Fatalf("result = %+v", res)
	}
	o := res.Outcomes
	if !o[0].OK || o[1].OK || o[1].Err != "" || o[2].OK || !strings.Contains(o[2].Err, "missing") || !o[3].OK {
		t.Fatalf("outcomes = %+v", o)
	}
	if res.CPU <= 0 || res.MaxRSS <= 0 {
		t.Errorf("the child's use is not reported: cpu %v rss %d", res.CPU, res.MaxRSS)
	}
}

// TestLimitsStopTheChild: each hostile lambda is stopped by its limit, the
// call is a failure naming it, and the calls after it are not run.
func TestLimitsStopTheChild(t *testing.T) {
	cases := []struct {
		name   string
		limits Limits
		lambda string
		want   string
	}{
		{"memory in one allocation", DefaultLimits, "lambda e: len([0] * 500000000) > 0", "more than 256 MiB of memory"},
		{"memory grown", DefaultLimits, "lambda e: len(str(list(range(100000000)))) > 0", "more than 256 MiB of memory"},
		{"memory grown a MiB at a time", Limits{Memory: 256 << 20, CPU: 20 * time.Second, Timeout: 60 * time.Second}, "lambda e: len([c * 1048576 for c in ['a'] * 600]) > 0", "more than 256 MiB of memory"},
		{"cpu", Limits{Memory: 256 << 20, CPU: time.Second, Timeout: 60 * time.Second}, "lambda e: sum(range(1000000000)) > 0", "more than 1s of CPU time"},
		{"wall time", Limits{Memory: 256 << 20, CPU: 60 * time.Second, Timeout: workflowtest.RaceSlack * time.Second}, "lambda e: sum(range(1000000000)) > 0", "ran longer than " + (workflowtest.RaceSlack * time.Second).String()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testRunner(c.limits)
			res, err := r.Run(context.Background(), batch(map[string]any{}, "lambda e: True", c.lambda, "lambda e: True"))
			if err != nil {
				t.Fatal(err)
			}
			o := res.Outcomes
			want := c.want
			if raceBuild && c.name == "memory in one allocation" && strings.Contains(res.Stopped, "of CPU time") {
				// A race build holds memory with the watchdog alone (race.go):
				// zeroing one huge allocation under the detector may use up
				// the CPU limit before the watchdog sees the memory. Either
				// limit stops it.
				want = "of CPU time"
			}
			if len(o) != 3 || !o[0].OK || o[1].OK || !strings.Contains(o[1].Err, want) || !strings.HasPrefix(o[1].Err, "stopped: ") ||
				o[2].OK || !strings.Contains(o[2].Err, "not run") || !strings.Contains(res.Stopped, want) {
				t.Fatalf("outcomes = %+v (stopped %q)", o, res.Stopped)
			}
			t.Logf("%s: stopped after %v of CPU, %d MiB peak: %s", c.name, res.CPU, res.MaxRSS>>20, o[1].Err)
			if res.CPU > workflowtest.Slack*max(c.limits.CPU, time.Second) {
				t.Errorf("the child used %v of CPU", res.CPU)
			}
		})
	}
}

// TestContextEndsTheChild: when the request's context ends (its client
// left), the child is killed and Run returns at once.
func TestContextEndsTheChild(t *testing.T) {
	r := testRunner(Limits{Memory: 256 << 20, CPU: 30 * time.Second, Timeout: 30 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, err := r.Run(ctx, batch(nil, "lambda e: sum(range(1000000000)) > 0"))
	if err != context.Canceled {
		t.Fatalf("Run = %+v, %v; want the context's error", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Run returned %v after the context ended", d)
	}
	if res.CPU > 5*time.Second {
		t.Fatalf("the child ran on: %v of CPU", res.CPU)
	}
}

// TestSlotsBoundConcurrentChildren: a runner with one slot runs one child
// at a time; a caller waiting for the slot gives up with its context.
func TestSlotsBoundConcurrentChildren(t *testing.T) {
	r := New([]string{os.Args[0], ChildCommand}, Limits{Memory: 256 << 20, CPU: 30 * time.Second, Timeout: 2 * time.Second}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(context.Background(), batch(nil, "lambda e: sum(range(1000000000)) > 0"))
	}()
	brokertest.Eventually(t, "the first child takes its slot", func() bool { return len(r.slots) > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.Run(ctx, batch(nil, "lambda e: True")); err != context.DeadlineExceeded {
		t.Fatalf("a second child ran beside the first: %v", err)
	}
	<-done
	if res, err := r.Run(context.Background(), batch(nil, "lambda e: True")); err != nil || !res.Outcomes[0].OK {
		t.Fatalf("after the first: %+v, %v", res, err)
	}
}

func TestNoCommand(t *testing.T) {
	_, err := New(nil, DefaultLimits, 1).Run(context.Background(), batch(nil, "lambda e: True"))
	if err == nil || !strings.Contains(err.Error(), "no command") {
		t.Fatalf("err = %v", err)
	}
}
