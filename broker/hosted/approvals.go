package hosted

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/store"
)

// ApprovalState is what [Approvals.Check] finds for a definition.
type ApprovalState string

// Approval states.
const (
	ApprovalApproved ApprovalState = "approved"       // this exact definition was approved
	ApprovalChanged  ApprovalState = "changed"        // an earlier definition was approved; this one was not
	ApprovalNever    ApprovalState = "never approved" // nothing was approved under this name
)

// Approval is one server's approval in one project.
type Approval struct {
	State      ApprovalState
	Digest     string    // the approved digest ("" when never approved)
	ApprovedAt time.Time // when it was approved
}

// approvalArea is the store area of approvals: data/<project id>/servers/.
const approvalArea = "servers"

// record is the stored value: data/<project id>/servers/<name> -> JSON.
type record struct {
	Digest     string    `json:"digest"`
	Command    string    `json:"command"` // what was approved, for people reading it back
	ApprovedAt time.Time `json:"approved_at"`
}

// Approvals records which project-declared server definitions the user
// approved, per project, in berth.db.
type Approvals struct{ db *store.DB }

// NewApprovals keeps approvals in db.
func NewApprovals(db *store.DB) *Approvals { return &Approvals{db: db} }

// Approve records the definition's digest for the server in the project.
func (a *Approvals) Approve(projectID, name string, s config.Server) error {
	raw, err := json.Marshal(record{Digest: s.Digest(), Command: commandLine(s.Command, s.Args, s.URL), ApprovedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	err = a.db.Area(projectID, approvalArea).Update(func(b *store.Bucket) error { return b.Put([]byte(name), raw) })
	if err != nil {
		return fmt.Errorf("approve server %q of project %s: %w", name, projectID, err)
	}
	return nil
}

// Check compares the definition with what was approved.
func (a *Approvals) Check(projectID, name string, s config.Server) (Approval, error) {
	var raw []byte
	err := a.db.Area(projectID, approvalArea).View(func(b *store.Bucket) error {
		raw = b.Get([]byte(name))
		return nil
	})
	if err != nil {
		return Approval{}, fmt.Errorf("read approval of server %q: %w", name, err)
	}
	if raw == nil {
		return Approval{State: ApprovalNever}, nil
	}
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Approval{}, fmt.Errorf("approval of server %q is unreadable (%v): approve it again", name, err)
	}
	st := ApprovalChanged
	if rec.Digest == s.Digest() {
		st = ApprovalApproved
	}
	return Approval{State: st, Digest: rec.Digest, ApprovedAt: rec.ApprovedAt}, nil
}

// Revoke forgets the approvals of the named servers, or of every server of
// the project when names is empty. Forgetting one never approved is not an
// error.
func (a *Approvals) Revoke(projectID string, names ...string) error {
	if len(names) == 0 {
		return a.db.Area(projectID, approvalArea).Drop()
	}
	return a.db.Area(projectID, approvalArea).Update(func(b *store.Bucket) error {
		for _, n := range names {
			if err := b.Delete([]byte(n)); err != nil {
				return err
			}
		}
		return nil
	})
}
