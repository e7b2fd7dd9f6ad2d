package definition

import (
	"context"
	"os"
	"testing"

	"github.com/berth-dev/berth/project/workflow/lambdaproc"
	"github.com/berth-dev/berth/project/workflow/workflowtest"
)

// TestMain lets this test binary serve as the child that runs gate lambdas.
func TestMain(m *testing.M) {
	lambdaproc.RunIfChild()
	os.Exit(m.Run())
}

// testLambdas runs gate lambdas in this test binary, as the broker does in
// the berth binary, under the broker's limits (their CPU time and deadline
// stretched in race builds).
var testLambdas = lambdaproc.New([]string{os.Args[0], lambdaproc.ChildCommand}, lambdaproc.Limits{
	Memory: lambdaproc.DefaultLimits.Memory, CPU: workflowtest.RaceSlack * lambdaproc.DefaultLimits.CPU, Timeout: workflowtest.RaceSlack * lambdaproc.DefaultLimits.Timeout}, 2)

// check is g.Check with the test's lambda runner; it fails the test when
// the check does not end.
func check(t testing.TB, g *Gate, evidence map[string]any) Result {
	t.Helper()
	r, err := g.Check(context.Background(), evidence, testLambdas)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
