package hosted

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/berth-dev/berth/api"
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
	// Changed says what differs from the approval (ApprovalChanged):
	// "its definition", "file server.js", "its roots".
	Changed []string
	// Tools is the tools filter the approval was given with: a filter
	// edited since serves only what both allow.
	Tools config.ToolFilter
}

// ApprovalArea is the store area of approvals: data/<project id>/servers/.
const ApprovalArea = "servers"

// record is the stored value: data/<project id>/servers/<name> -> JSON.
type record struct {
	Digest     string    `json:"digest"`
	Command    string    `json:"command"` // what was approved, for people reading it back
	ApprovedAt time.Time `json:"approved_at"`
	// Files, Roots and Tools are what the approval covers beyond the
	// definition's digest. Roots is nil in approvals recorded before
	// roots existed, which told servers the project root.
	Files []api.ServerFile  `json:"files,omitempty"`
	Roots []string          `json:"roots,omitempty"`
	Tools config.ToolFilter `json:"tools,omitzero"`
}

// Approvals records which project-declared server definitions the user
// approved, per project, in berth.db: each definition's digest, the
// content of the project's files it runs and the roots it is told.
type Approvals struct{ db *store.DB }

// NewApprovals keeps approvals in db.
func NewApprovals(db *store.DB) *Approvals { return &Approvals{db: db} }

// Approve records the definition s of the server in the project, with d,
// what it reaches now (Describe's Definition).
func (a *Approvals) Approve(projectID, name string, s config.Server, d *api.ServerDefinition) error {
	rec := record{Digest: s.Digest(), Command: commandLine(s.Command, s.Args, s.URL), ApprovedAt: time.Now().UTC(), Tools: s.Tools}
	if d != nil {
		rec.Files, rec.Roots = d.Files, d.Roots
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	err = a.db.Area(projectID, ApprovalArea).Update(func(b *store.Bucket) error { return b.Put([]byte(name), raw) })
	if err != nil {
		return fmt.Errorf("approve server %q of project %s: %w", name, projectID, err)
	}
	return nil
}

// Check compares the definition s, reaching d now, with what was
// approved for the server in the project at root.
func (a *Approvals) Check(projectID, root, name string, s config.Server, d *api.ServerDefinition) (Approval, error) {
	var raw []byte
	err := a.db.Area(projectID, ApprovalArea).View(func(b *store.Bucket) error {
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
	ap := Approval{State: ApprovalApproved, Digest: rec.Digest, ApprovedAt: rec.ApprovedAt, Tools: rec.Tools}
	if rec.Digest != s.Digest() {
		ap.Changed = append(ap.Changed, "its definition (servers."+name+")")
	} else if d != nil {
		ap.Changed = append(ap.Changed, changedFiles(rec.Files, d.Files)...)
		approvedRoots := rec.Roots
		if approvedRoots == nil {
			approvedRoots = []string{root}
		}
		if wider := rootsOutside(d.Roots, approvedRoots); len(wider) > 0 {
			ap.Changed = append(ap.Changed, "its roots (now "+fmt.Sprint(d.Roots)+", approved "+fmt.Sprint(approvedRoots)+")")
		}
	}
	if len(ap.Changed) > 0 {
		ap.State = ApprovalChanged
	}
	return ap, nil
}

// changedFiles names the files that differ between the approval and now.
func changedFiles(approved, now []api.ServerFile) []string {
	was := map[string]api.ServerFile{}
	for _, f := range approved {
		was[f.Path] = f
	}
	var out []string
	for _, f := range now {
		old, ok := was[f.Path]
		switch {
		case !ok:
			out = append(out, "file "+f.Path+" (not covered by the approval)")
		case old != f:
			out = append(out, "file "+f.Path)
		}
		delete(was, f.Path)
	}
	for _, p := range sortedKeys(was) {
		out = append(out, "file "+p+" (gone)")
	}
	return out
}

// Revoke forgets the approvals of the named servers, or of every server of
// the project when names is empty. Forgetting one never approved is not an
// error.
func (a *Approvals) Revoke(projectID string, names ...string) error {
	if len(names) == 0 {
		return a.db.Area(projectID, ApprovalArea).Drop()
	}
	return a.db.Area(projectID, ApprovalArea).Update(func(b *store.Bucket) error {
		for _, n := range names {
			if err := b.Delete([]byte(n)); err != nil {
				return err
			}
		}
		return nil
	})
}

// rootsOutside are the roots of now that lie in none of the approved
// roots. Roots an approval already covers (the same, or a folder inside
// one: a folder its args name that the server created after the approval)
// need no new approval; a root beyond them does.
func rootsOutside(now, approved []string) []string {
	var out []string
	for _, r := range now {
		if !slices.ContainsFunc(approved, func(a string) bool { return within(a, r) }) {
			out = append(out, r)
		}
	}
	return out
}
