package definition

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/project/workflow/dynamic"
)

// File names inside a workflow folder.
const (
	MetadataFile = "metadata.json"
	PhaseFile    = "phase.md"
	GateFile     = "gate-definition.yaml"
	phasesDir    = "phases"
)

// Defaults of dynamic_config, as praxis-os has them.
const (
	DefaultSourceKey     = "spec_path"
	DefaultPhaseTemplate = "phases/dynamic/phase-template.md"
	DefaultTaskTemplate  = "phases/dynamic/task-template.md"
)

// Size limits for definition files.
const (
	maxMetadataBytes = 4 << 20
	maxGateBytes     = 1 << 20
	// MaxContentBytes bounds a phase or task file returned to a client.
	MaxContentBytes = 4 << 20
	maxWorkflows    = 1000
)

var taskFileRE = regexp.MustCompile(`^task-(\d+)(?:-(.*))?\.md$`)

// LoadAll loads every workflow folder under dir, sorted by name. Folders whose
// names start with "." or "_" are skipped. A missing dir gives no workflows;
// broken workflows are returned with Err set.
func LoadAll(dir string) ([]*Workflow, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read workflows folder %s: %w", dir, err)
	}
	var out []*Workflow
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		if len(out) == maxWorkflows {
			return out, fmt.Errorf("workflows folder %s has more than %d workflows; the rest are ignored", dir, maxWorkflows)
		}
		out = append(out, Load(dir, name))
	}
	return out, nil
}

// Load loads the workflow folder dir/name. It never returns nil; problems
// that stop the workflow from running are joined in Err.
func Load(dir, name string) *Workflow {
	w := &Workflow{Type: name, Dir: filepath.Join(dir, name), FirstPhase: 1}
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		w.Err = fmt.Errorf("open workflow folder: %w", err)
		return w
	}
	defer root.Close()
	l := &loader{w: w, root: root}
	l.load()
	w.Err = errors.Join(l.errs...)
	return w
}

type loader struct {
	w    *Workflow
	root *os.Root
	errs []error
}

func (l *loader) fail(format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf(format, args...))
}

func (l *loader) warn(format string, args ...any) {
	l.w.Warnings = append(l.w.Warnings, fmt.Sprintf(format, args...))
}

func (l *loader) load() {
	w := l.w
	data, err := readLimited(l.root, MetadataFile, maxMetadataBytes)
	if errors.Is(err, fs.ErrNotExist) {
		l.fail("%s is missing: add one with workflow_type, total_phases and phases[]", MetadataFile)
		return
	}
	if err != nil {
		l.fail("%s: %w", MetadataFile, err)
		return
	}
	var warns []string
	w.Meta, warns, err = ParseMetadata(data)
	if err != nil {
		l.fail("%s: %w", MetadataFile, err)
		return
	}
	w.Warnings = append(w.Warnings, warns...)
	switch w.Meta.WorkflowType {
	case "":
		l.warn("%s has no workflow_type; the folder name %q is used", MetadataFile, w.Type)
	case w.Type:
	default:
		l.warn("%s names workflow_type %q; the folder name %q is what tools use", MetadataFile, w.Meta.WorkflowType, w.Type)
	}
	if l.isDir(phaseDir(0)) || slices.ContainsFunc(w.Meta.Phases, func(p PhaseMeta) bool { return p.PhaseNumber.Range == "" && p.PhaseNumber.N == 0 }) {
		w.FirstPhase = 0
	}
	if s := w.Meta.StartPhase; s != nil && *s != w.FirstPhase {
		l.warn("%s: start_phase %d differs from the phases found; the workflow starts at phase %d", MetadataFile, *s, w.FirstPhase)
	}
	if w.Meta.Dynamic() {
		l.loadDynamic()
		return
	}
	l.loadStatic(w.Meta.TotalPhases.Count)
}

// loadStatic loads phases FirstPhase..FirstPhase+count-1.
func (l *loader) loadStatic(count int) {
	w := l.w
	last := w.FirstPhase + count - 1
	byNumber := make(map[int]PhaseMeta, len(w.Meta.Phases))
	for _, pm := range w.Meta.Phases {
		n := pm.PhaseNumber.N
		if pm.PhaseNumber.Range != "" {
			continue
		}
		if n < w.FirstPhase || n > last {
			l.warn("%s lists phase %d, but total_phases %d means phases %d-%d: that entry is ignored", MetadataFile, n, w.Meta.TotalPhases.Count, w.FirstPhase, last)
			continue
		}
		byNumber[n] = pm
	}
	for n := w.FirstPhase; n <= last; n++ {
		pm, ok := byNumber[n]
		if !ok {
			pm = PhaseMeta{PhaseNumber: PhaseNumber{N: n}}
			if len(w.Meta.Phases) > 0 {
				l.warn("%s has no entry for phase %d", MetadataFile, n)
			}
		}
		w.Phases = append(w.Phases, l.loadPhase(pm))
	}
}

// loadDynamic loads the static phases listed before the range entry and
// checks what the generated phases need: a known parser and the templates.
func (l *loader) loadDynamic() {
	w := l.w
	cfg := w.Meta.DynamicConfig
	if cfg == nil {
		l.fail("%s: the workflow is dynamic but has no dynamic_config: add {\"source_path_key\": \"spec_path\", \"parser\": \"spec_tasks_parser\", \"templates\": {\"phase\": %q, \"task\": %q}}", MetadataFile, DefaultPhaseTemplate, DefaultTaskTemplate)
		cfg = &DynamicConfig{}
	}
	d := &Dynamic{SourceKey: cfg.SourcePathKey, Parser: cfg.Parser, PhaseTemplate: cfg.Templates.Phase, TaskTemplate: cfg.Templates.Task}
	if d.SourceKey == "" {
		d.SourceKey = DefaultSourceKey
	}
	if d.Parser == "" {
		d.Parser = dynamic.ParserSpecTasks
	}
	if !dynamic.Known(d.Parser) {
		l.fail("%s: dynamic_config.parser %q is not one Berth has: use %s or %s", MetadataFile, d.Parser, dynamic.ParserSpecTasks, dynamic.ParserWorkflowDefinition)
	}
	for _, t := range []struct {
		field string
		path  *string
		def   string
	}{{"phase", &d.PhaseTemplate, DefaultPhaseTemplate}, {"task", &d.TaskTemplate, DefaultTaskTemplate}} {
		if *t.path == "" {
			*t.path = t.def
		}
		switch {
		case !isLocalPath(*t.path):
			l.fail("%s: dynamic_config.templates.%s %q must be a path inside the workflow folder", MetadataFile, t.field, *t.path)
		case !l.isFile(*t.path):
			l.fail("%s is missing (dynamic_config.templates.%s): dynamic phases are rendered from it; add the template or fix the path", *t.path, t.field)
		}
	}
	var static []PhaseMeta
	for _, pm := range w.Meta.Phases {
		if pm.PhaseNumber.Range != "" {
			block := phaseFromMeta(pm)
			d.Block, d.Range = &block, pm.PhaseNumber.Range
			continue
		}
		static = append(static, pm)
	}
	slices.SortFunc(static, func(a, b PhaseMeta) int { return a.PhaseNumber.N - b.PhaseNumber.N })
	next := w.FirstPhase
	for _, pm := range static {
		n := pm.PhaseNumber.N
		if n != next || (d.Block != nil && n >= d.Block.Number) {
			l.warn("%s lists phase %d after the static phases %d-%d and the dynamic phases %q: that entry is ignored (static phases come first, numbered without gaps)", MetadataFile, n, w.FirstPhase, next-1, d.Range)
			continue
		}
		w.Phases = append(w.Phases, l.loadPhase(pm))
		next++
	}
	if d.Block != nil && d.Block.Number != next {
		l.warn("%s: the dynamic phases %q follow the static phases, so they are numbered from %d", MetadataFile, d.Range, next)
	}
	w.Dynamic = d
}

func phaseFromMeta(pm PhaseMeta) Phase {
	n := pm.PhaseNumber.N
	p := Phase{
		Number: n, Name: pm.PhaseName, Purpose: string(pm.Purpose),
		EstimatedEffort:    string(pm.EstimatedEffort),
		KeyDeliverables:    Texts(pm.KeyDeliverables),
		ValidationCriteria: Texts(pm.ValidationCriteria),
		File:               path.Join(phaseDir(n), PhaseFile),
		Skippable:          bool(pm.Skippable),
		SkipCondition:      strings.TrimSpace(pm.SkipCondition),
		Tasks:              []Task{},
		Gate:               Permissive(),
	}
	if f := pm.overview(); f != "" {
		p.File = path.Clean(f)
	}
	if p.Name == "" {
		p.Name = fmt.Sprintf("Phase %d", n)
	}
	return p
}

func (l *loader) loadPhase(pm PhaseMeta) Phase {
	p := phaseFromMeta(pm)
	l.loadSkip(&p)
	dir := phaseDir(p.Number)
	if !l.isDir(dir) {
		l.warn("%s/ is missing (phase %d %q): its overview and tasks are answered from the standards search", dir, p.Number, p.Name)
		p.Missing = true
		p.Tasks = l.loadTasks(dir, pm.Tasks, true)
		p.Gate = l.metadataGate(pm, p.Gate, false)
		return p
	}
	if !l.isFile(p.File) {
		l.warn("%s is missing (phase %d): its overview is answered from the standards search", p.File, p.Number)
		p.Missing = true
	}
	p.Tasks = l.loadTasks(dir, pm.Tasks, false)
	gatePath := path.Join(dir, GateFile)
	data, err := readLimited(l.root, gatePath, maxGateBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.Gate = l.metadataGate(pm, p.Gate, false)
	case err != nil:
		l.fail("%s: %w", gatePath, err)
	default:
		g, warns, err := ParseGate(data)
		if err != nil {
			l.fail("%s: %w", gatePath, err)
			break
		}
		for _, w := range warns {
			l.warn("%s: %s", gatePath, w)
		}
		p.Gate = l.metadataGate(pm, g, true)
	}
	return p
}

// metadataGate applies a metadata checkpoint's required_evidence: without a
// gate file it is the gate (strict: each field must be present); with one,
// the gate file governs, as in praxis-os, and fields it lacks are named.
func (l *loader) metadataGate(pm PhaseMeta, g *Gate, fromFile bool) *Gate {
	if pm.Checkpoint == nil || len(pm.Checkpoint.RequiredEvidence) == 0 {
		return g
	}
	req := pm.Checkpoint.RequiredEvidence
	if !fromFile {
		return RequiredGate(req)
	}
	var absent []string
	for _, f := range req {
		if _, ok := g.Field(f.Name); !ok {
			absent = append(absent, f.Name)
		}
	}
	if len(absent) > 0 {
		l.warn("%s: phase %d checkpoint.required_evidence names %s, which %s does not declare: the gate file governs, as in praxis-os",
			MetadataFile, pm.PhaseNumber.N, strings.Join(absent, ", "), path.Join(phaseDir(pm.PhaseNumber.N), GateFile))
	}
	return g
}

// loadSkip reads skip_condition into the option it tests, when it can.
func (l *loader) loadSkip(p *Phase) {
	switch {
	case p.SkipCondition != "" && !p.Skippable:
		l.warn("phase %d has a skip_condition but is not skippable: add \"skippable\": true, or the condition is ignored", p.Number)
	case p.SkipCondition != "":
		if p.SkipOption = SkipOption(p.SkipCondition); p.SkipOption == "" {
			l.warn("phase %d: skip_condition %q is not a form Berth evaluates (such as \"No supporting_docs in options\"): the phase is skipped only on request (complete_phase with skip: true)", p.Number, p.SkipCondition)
		}
	}
}

func (l *loader) loadTasks(dir string, metas []TaskMeta, folderMissing bool) []Task {
	found := map[int]string{}
	if !folderMissing {
		found = l.taskFiles(dir)
	}
	tasks := []Task{}
	if len(metas) == 0 {
		for _, k := range sortedKeys(found) {
			name := found[k]
			slug := taskFileRE.FindStringSubmatch(name)[2]
			tasks = append(tasks, Task{Number: k, Name: strings.ReplaceAll(slug, "-", " "), File: path.Join(dir, name)})
		}
		return tasks
	}
	listed := map[string]bool{}
	for _, tm := range metas {
		t := Task{Number: tm.TaskNumber, Name: tm.Name, Purpose: string(tm.Purpose)}
		if t.Name == "" {
			t.Name = fmt.Sprintf("Task %d", tm.TaskNumber)
		}
		file := tm.File
		if file == "" {
			file = found[tm.TaskNumber]
		}
		switch {
		case file == unsafeFile:
			t.Missing = true
		case file == "":
			t.Missing = true
			if !folderMissing {
				l.warn("%s: task %d names no file and no task-%d-*.md exists: get_task answers from the standards search", dir, tm.TaskNumber, tm.TaskNumber)
			}
		default:
			t.File = path.Join(dir, file)
			listed[file] = true
			if !folderMissing && !l.isFile(t.File) {
				l.warn("%s is missing (task %d): get_task answers from the standards search", t.File, tm.TaskNumber)
				t.Missing = true
			}
			t.Missing = t.Missing || folderMissing
		}
		tasks = append(tasks, t)
	}
	var unlisted []string
	for _, k := range sortedKeys(found) {
		if !listed[found[k]] {
			unlisted = append(unlisted, found[k])
		}
	}
	if len(unlisted) > 0 {
		l.warn("%s/ holds task files %s does not list (%s): they are not served", dir, MetadataFile, strings.Join(unlisted, ", "))
	}
	slices.SortFunc(tasks, func(a, b Task) int { return a.Number - b.Number })
	return tasks
}

// taskFiles maps task numbers to the task-K-*.md files of a phase folder.
func (l *loader) taskFiles(dir string) map[int]string {
	out := make(map[int]string)
	f, err := l.root.Open(dir)
	if err != nil {
		return out
	}
	defer f.Close()
	names, err := f.Readdirnames(maxTasksPerPhase * 4)
	if err != nil && len(names) == 0 {
		return out
	}
	slices.Sort(names)
	for _, name := range names {
		m := taskFileRE.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		k, err := strconv.Atoi(m[1])
		if err != nil || k < 0 {
			continue
		}
		if _, dup := out[k]; !dup && l.isFile(path.Join(dir, name)) {
			out[k] = name
		}
	}
	return out
}

func (l *loader) isDir(name string) bool {
	fi, err := l.root.Stat(name)
	return err == nil && fi.IsDir()
}

func (l *loader) isFile(name string) bool {
	fi, err := l.root.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

func phaseDir(n int) string { return path.Join(phasesDir, strconv.Itoa(n)) }

func sortedKeys(m map[int]string) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
