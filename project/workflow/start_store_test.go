package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/berth-dev/berth/store"
)

// An active session whose record cannot be read is an error to Start, not
// "no active session": Start must not go on to plan a new session (here it
// would refuse for want of a source option the resume does not need) and
// hide the store's error behind its own.
func TestStartReportsAnActiveSessionItCannotRead(t *testing.T) {
	e, _ := compatProject(t)
	ctx := context.Background()
	st, err := e.Start(ctx, "spec_execution_v1", "feature", map[string]any{"spec_path": workflowtest.SpecPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.area.Update(func(b *store.Bucket) error {
		return b.Bucket(bucketSessions).Put([]byte(st.SessionID), []byte(`{"session_id":`))
	}); err != nil {
		t.Fatal(err)
	}
	_, err = e.Start(ctx, "spec_execution_v1", "feature", nil)
	if err == nil || errors.Is(err, ErrDynamicSource) || !strings.Contains(err.Error(), "decode session "+st.SessionID) {
		t.Fatalf("Start over an unreadable active session: %v; want the decode error", err)
	}
}
