package hosted

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCompleteFindsTheServer: a hosted prompt's completion goes to its
// server, which answers no values when it offers no completions; a prompt
// or template no hosted server serves is left to the project.
func TestCompleteFindsTheServer(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	hp := openProject(t, newPool(t, testOptions()), "p1", fakeDecl(t, "fake"))
	s := connect(t, hp, sessionOpts{})
	toolNames(t, ctx, s) // the lazy server starts when a session lists
	complete := func(ref *mcp.CompleteReference) (*mcp.CompleteResult, bool, error) {
		return hp.Complete(ctx, &mcp.CompleteRequest{Params: &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "b"}}})
	}
	res, handled, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "fake__greet"})
	if !handled || err != nil || res == nil || res.Completion.Values == nil || len(res.Completion.Values) != 0 {
		t.Errorf("fake__greet of a server without completions: %+v, %v, %v; want no values", res, handled, err)
	}
	for _, ref := range []*mcp.CompleteReference{
		{Type: "ref/prompt", Name: "fake__nothing"},
		{Type: "ref/prompt", Name: "other__greet"},
		{Type: "ref/prompt", Name: "greet"},
		{Type: "ref/resource", URI: "fake://{id}"},
		nil,
	} {
		if _, handled, err := complete(ref); handled || err != nil {
			t.Errorf("%+v: handled %v, %v; want it left to the project", ref, handled, err)
		}
	}
}
