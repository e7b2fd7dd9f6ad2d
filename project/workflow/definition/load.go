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
	"sort"
	"strconv"
	"strings"
)

// File names inside a workflow folder.
const (
	MetadataFile = "metadata.json"
	PhaseFile    = "phase.md"
	GateFile     = "gate-definition.yaml"
	phasesDir    = "phases"
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

func (l *loader) load() {
	w := l.w
	data, err := readLimited(l.root, MetadataFile, maxMetadataBytes)
	if errors.Is(err, fs.ErrNotExist) {
		l.fail("%s is missing", MetadataFile)
		return
	}
	if err != nil {
		l.fail("%s: %w", MetadataFile, err)
		return
	}
	w.Meta, err = ParseMetadata(data)
	if err != nil {
		l.fail("%s: %w", MetadataFile, err)
		return
	}
	switch w.Meta.WorkflowType {
	case "":
		w.Warnings = append(w.Warnings, fmt.Sprintf("%s has no workflow_type; the folder name %q is used", MetadataFile, w.Type))
	case w.Type:
	default:
		w.Warnings = append(w.Warnings, fmt.Sprintf("%s names workflow_type %q; the folder name %q is what tools use", MetadataFile, w.Meta.WorkflowType, w.Type))
	}
	if l.isDir(phaseDir(0)) {
		w.FirstPhase = 0
	}
	if w.Dynamic() {
		l.loadDynamic()
		return
	}
	l.loadStatic()
}

// loadDynamic lists the phases named in metadata; their content is generated
// at run time, which Berth does not do, so files are not checked.
func (l *loader) loadDynamic() {
	w := l.w
	if len(w.Meta.Phases) > 0 && !l.isDir(phaseDir(0)) {
		w.FirstPhase = slices.MinFunc(w.Meta.Phases, func(a, b PhaseMeta) int { return a.PhaseNumber - b.PhaseNumber }).PhaseNumber
	}
	for _, pm := range w.Meta.Phases {
		w.Phases = append(w.Phases, phaseFromMeta(pm))
	}
	sort.Slice(w.Phases, func(i, j int) bool { return w.Phases[i].Number < w.Phases[j].Number })
}

func (l *loader) loadStatic() {
	w := l.w
	count := w.Meta.TotalPhases.Count
	last := w.FirstPhase + count - 1
	byNumber := make(map[int]PhaseMeta, len(w.Meta.Phases))
	for _, pm := range w.Meta.Phases {
		if pm.PhaseNumber < w.FirstPhase || pm.PhaseNumber > last {
			l.fail("%s lists phase %d, but total_phases %d means phases %d-%d", MetadataFile, pm.PhaseNumber, count, w.FirstPhase, last)
			continue
		}
		byNumber[pm.PhaseNumber] = pm
	}
	for n := w.FirstPhase; n <= last; n++ {
		pm, ok := byNumber[n]
		if !ok {
			pm = PhaseMeta{PhaseNumber: n}
			if len(w.Meta.Phases) > 0 {
				w.Warnings = append(w.Warnings, fmt.Sprintf("%s has no entry for phase %d", MetadataFile, n))
			}
		}
		w.Phases = append(w.Phases, l.loadPhase(pm))
	}
}

func phaseFromMeta(pm PhaseMeta) Phase {
	p := Phase{
		Number: pm.PhaseNumber, Name: pm.PhaseName, Purpose: pm.Purpose,
		EstimatedEffort:    string(pm.EstimatedEffort),
		KeyDeliverables:    Texts(pm.KeyDeliverables),
		ValidationCriteria: Texts(pm.ValidationCriteria),
		File:               path.Join(phaseDir(pm.PhaseNumber), PhaseFile),
		Tasks:              []Task{},
		Gate:               Permissive(),
	}
	if p.Name == "" {
		p.Name = fmt.Sprintf("Phase %d", pm.PhaseNumber)
	}
	return p
}

func (l *loader) loadPhase(pm PhaseMeta) Phase {
	p := phaseFromMeta(pm)
	dir := phaseDir(p.Number)
	if !l.isDir(dir) {
		l.fail("%s/ is missing (phase %d)", dir, p.Number)
		return p
	}
	if !l.isFile(p.File) {
		l.fail("%s is missing", p.File)
	}
	p.Tasks = l.loadTasks(dir, pm.Tasks)
	gatePath := path.Join(dir, GateFile)
	data, err := readLimited(l.root, gatePath, maxGateBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		l.fail("%s: %w", gatePath, err)
	default:
		g, err := ParseGate(data)
		if err != nil {
			l.fail("%s: %w", gatePath, err)
			break
		}
		p.Gate = g
		if n := len(g.Unsupported); n > 0 {
			l.w.Warnings = append(l.w.Warnings, fmt.Sprintf("%s: %d Python validator(s) are not checked (unsupported)", gatePath, n))
		}
	}
	return p
}

func (l *loader) loadTasks(dir string, metas []TaskMeta) []Task {
	found := l.taskFiles(dir)
	tasks := []Task{}
	if len(metas) == 0 {
		for _, k := range sortedKeys(found) {
			name := found[k]
			slug := taskFileRE.FindStringSubmatch(name)[2]
			tasks = append(tasks, Task{Number: k, Name: strings.ReplaceAll(slug, "-", " "), File: path.Join(dir, name)})
		}
		return tasks
	}
	for _, tm := range metas {
		t := Task{Number: tm.TaskNumber, Name: tm.Name, Purpose: tm.Purpose}
		file := tm.File
		if file == "" {
			file = found[tm.TaskNumber]
		}
		if file == "" {
			l.fail("%s: task %d names no file and no task-%d-*.md exists", dir, tm.TaskNumber, tm.TaskNumber)
			continue
		}
		t.File = path.Join(dir, file)
		if !l.isFile(t.File) {
			l.fail("%s is missing (task %d)", t.File, tm.TaskNumber)
		}
		if t.Name == "" {
			t.Name = fmt.Sprintf("Task %d", tm.TaskNumber)
		}
		tasks = append(tasks, t)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].Number < tasks[j].Number })
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
		if err != nil || k < 1 {
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
