package workflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/project/workflow/definition"
	"github.com/berth-dev/berth/project/workflow/dynamic"
	"github.com/berth-dev/berth/store"
)

// Plan is what a dynamic session runs after the workflow's static phases:
// the phases its source (a spec's tasks.md) gave when the session started.
// It is stored with the session, so that a broker restart or a later edit
// of the source leaves a running session as it was; start a new session to
// pick an edit up.
type Plan struct {
	// Source is the file parsed, relative to the project root.
	Source string `json:"source"`
	// SHA256 is the source's hash when it was parsed.
	SHA256   string    `json:"sha256"`
	Parser   string    `json:"parser"`
	ParsedAt time.Time `json:"parsed_at"`
	// FirstPhase is the session's number of the first generated phase.
	FirstPhase int             `json:"first_phase"`
	Phases     []dynamic.Phase `json:"phases"`
}

// specFile is the file a spec folder's phases are read from.
const specFile = "tasks.md"

// buildPlan reads and parses the source that options name for w. It runs
// outside any store transaction.
func (e *Engine) buildPlan(ctx context.Context, w *definition.Workflow, options map[string]any) (*Plan, error) {
	d := w.Dynamic
	remedy := fmt.Sprintf("start %s with options.%s: the spec folder holding %s (or the file itself), relative to the project root, such as .praxis-os/specs/2025-10-07-my-feature",
		w.Type, d.SourceKey, specFile)
	raw, ok := options[d.SourceKey]
	rel, isText := raw.(string)
	switch {
	case !ok || raw == nil:
		return nil, newError(ErrDynamicSource, remedy, "workflow %q makes its phases from a source and needs options.%s", w.Type, d.SourceKey)
	case !isText || strings.TrimSpace(rel) == "":
		return nil, newError(ErrDynamicSource, remedy, "options.%s must be a path as text", d.SourceKey)
	}
	rel, data, err := e.readSource(strings.TrimSpace(rel), d.Parser)
	if err != nil {
		return nil, newError(ErrDynamicSource, remedy, "options.%s: %v", d.SourceKey, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	phases, err := dynamic.Parse(d.Parser, data)
	if errors.Is(err, dynamic.ErrNoPhases) {
		return nil, newError(ErrDynamicSource, "give "+rel+" phase headings such as \"## Phase 1: Storage\" with tasks such as \"- [ ] **Task 1.1**: Create the table\"",
			"%s holds no phases that %s recognises", rel, d.Parser)
	}
	if err != nil {
		return nil, newError(ErrDynamicSource, "fix "+rel+" and start again", "%s: %v", rel, err)
	}
	if err := e.checkRenders(w, phases); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &Plan{
		Source: rel, SHA256: hex.EncodeToString(sum[:]), Parser: d.Parser, ParsedAt: e.now(),
		FirstPhase: w.FirstPhase + len(w.Phases), Phases: phases,
	}, nil
}

// checkRenders refuses a plan whose phases or tasks would render past
// dynamic.MaxRenderedBytes from w's templates (sizes only, nothing is
// rendered), so that no session starts on a phase it cannot show.
func (e *Engine) checkRenders(w *definition.Workflow, phases []dynamic.Phase) error {
	phaseTmpl, err := w.ReadFile(w.Dynamic.PhaseTemplate)
	if err != nil {
		return readError(w, w.Dynamic.PhaseTemplate, err)
	}
	taskTmpl, err := w.ReadFile(w.Dynamic.TaskTemplate)
	if err != nil {
		return readError(w, w.Dynamic.TaskTemplate, err)
	}
	if err := dynamic.CheckPlan(phaseTmpl, taskTmpl, phases, w.FirstPhase+len(w.Phases)); err != nil {
		return newError(ErrContentTooLarge, "shorten the templates of workflow "+w.Type+" or the spec's text, then start again",
			"workflow %q cannot start on this spec: %v", w.Type, err)
	}
	return nil
}

// readSource reads the source at rel (a spec folder means its tasks.md) and
// returns its path relative to the root. It cannot leave the project.
func (e *Engine) readSource(rel, parser string) (string, []byte, error) {
	if filepath.IsAbs(rel) {
		r, err := filepath.Rel(e.root, rel)
		if err != nil || !filepath.IsLocal(r) {
			return "", nil, fmt.Errorf("%q is outside the project", rel)
		}
		rel = r
	}
	rel = path.Clean(filepath.ToSlash(rel))
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", nil, fmt.Errorf("%q is not a path inside the project", rel)
	}
	root, err := os.OpenRoot(e.root)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	fi, err := root.Stat(filepath.FromSlash(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s does not exist", rel)
	}
	if err != nil {
		return "", nil, err
	}
	if fi.IsDir() {
		if parser != dynamic.ParserSpecTasks {
			return "", nil, fmt.Errorf("%s is a folder; %s reads a file", rel, parser)
		}
		rel = path.Join(rel, specFile)
	}
	f, err := root.Open(filepath.FromSlash(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("%s does not exist", rel)
	}
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, dynamic.MaxSourceBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if len(data) > dynamic.MaxSourceBytes {
		return "", nil, fmt.Errorf("%s is larger than %d bytes, the most Berth reads of a source: split the spec", rel, dynamic.MaxSourceBytes)
	}
	return rel, data, nil
}

// sourceChanged reports whether the plan's source now differs from what
// was parsed (or is gone).
func (e *Engine) sourceChanged(p *Plan) bool {
	_, data, err := e.readSource(p.Source, p.Parser)
	if err != nil {
		return true
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]) != p.SHA256
}

// runFor returns the run of session s. A dynamic session without a plan (one
// imported from praxis-os) gets one from its options, stored with it.
func (e *Engine) runFor(ctx context.Context, s *Session) (run, error) {
	w, err := e.runnable(s.WorkflowType)
	if err != nil {
		return run{}, err
	}
	r := run{w: w, plan: s.Plan}
	if w.Dynamic == nil || s.Plan != nil {
		return r, nil
	}
	opts := s.Options
	if opts == nil {
		opts = s.Metadata
	}
	plan, err := e.buildPlan(ctx, w, opts)
	if err != nil {
		return run{}, err
	}
	err = e.update(func(b *store.Bucket) error {
		cur, err := getSession(b, s.SessionID)
		if err != nil || cur == nil {
			return err
		}
		if cur.Plan != nil {
			plan = cur.Plan
			return nil
		}
		cur.Plan = plan
		cur.FirstPhase, cur.TotalPhases = w.FirstPhase, run{w: w, plan: plan}.total()
		cur.updateStatus()
		return putSession(b, cur)
	})
	if err != nil {
		return run{}, err
	}
	e.log.Info("dynamic phases planned for an existing session", "session", s.SessionID, "source", plan.Source, "phases", len(plan.Phases))
	s.Plan = plan
	s.FirstPhase, s.TotalPhases = w.FirstPhase, run{w: w, plan: plan}.total()
	return run{w: w, plan: plan}, ctx.Err()
}
