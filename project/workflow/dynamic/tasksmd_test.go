package dynamic

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/project/workflow/workflowtest"
	"github.com/google/go-cmp/cmp"
)

func TestSpecTasksParserOnTheSmallSpec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "specs", "2025-10-07-small-feature", "tasks.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(ParserSpecTasks, data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Phase{
		{
			Number: 1, Name: "Storage Layer", Description: "Store greetings durably so that later phases can serve them.",
			EstimatedDuration: "2 hours",
			Tasks: []Task{
				{ID: "1.1", Name: "Create the greetings table", Description: "Create the greetings table", EstimatedTime: "30 minutes",
					Dependencies: []string{}, AcceptanceCriteria: []string{"Migration runs up and down", "Table has an index on created_at"}},
				{ID: "1.2", Name: "Add the repository", Description: "Add the repository", EstimatedTime: "1 hour",
					Dependencies: []string{"1.1"}, AcceptanceCriteria: []string{"Insert and list work against a real database", "Errors are wrapped with context"}},
			},
			ValidationGate: []string{"Migration applied in CI", "Repository tests pass"},
		},
		{
			Number: 2, Name: "HTTP API", Description: "Serve the greetings over HTTP.", EstimatedDuration: "1 hour",
			Tasks: []Task{
				{ID: "2.1", Name: "Add the GET /greetings handler", Description: "Add the GET /greetings handler", EstimatedTime: "45 minutes",
					Dependencies: []string{"1.2"}, AcceptanceCriteria: []string{"Returns the greetings newest first", "Answers 500 with a JSON error when the store fails"}},
			},
			ValidationGate: []string{"Handler tests pass", "Greetings are stored", "Greetings are served"},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("phases (-want +got):\n%s", d)
	}
}

func TestPhaseHeadingShapes(t *testing.T) {
	cases := []struct {
		heading string
		num     int
		name    string
		ok      bool
	}{
		{"Phase 1: Setup", 1, "Setup", true},
		{"Phase 2 - Build", 2, "Build", true},
		{"PHASE 3 — Ship it", 3, "Ship it", true},
		{"Phase 4. Polish", 4, "Polish", true},
		{"5. Cleanup", 5, "Cleanup", true},
		{"6: Docs", 6, "Docs", true},
		{"Phase 1 Tasks", 0, "", false},
		{"Phase 1", 0, "", false},
		{"Phase 0: Preparation", 0, "", false},
		{"Task 1.1: Create table", 0, "", false},
		{"1.2 Something", 0, "", false},
		{"Phase 1 → Phase 2", 0, "", false},
		{"Time Estimates", 0, "", false},
		{"Phase 7:", 0, "", false},
	}
	for _, c := range cases {
		n, name, ok := phaseInfo(c.heading)
		if n != c.num || name != c.name || ok != c.ok {
			t.Errorf("phaseInfo(%q) = %d %q %v, want %d %q %v", c.heading, n, name, ok, c.num, c.name, c.ok)
		}
	}
}

func TestTaskShapes(t *testing.T) {
	cases := []struct{ text, id, name string }{
		{"[ ] Task 1.1: Create the table\nmore", "1.1", "Create the table"},
		{"Task 2-3 - Wire it", "2.3", "Wire it"},
		{"**Task 3.1**: Bold", "3.1", "Bold"},
		{"4.2 Numbered only", "4.2", "Numbered only"},
		{"Task 1: no second number", "", ""},
		{"Task 1.1:", "", ""},
	}
	for _, c := range cases {
		id, name, ok := taskInfo(c.text)
		if id != c.id || name != c.name || ok != (c.id != "") {
			t.Errorf("taskInfo(%q) = %q %q %v, want %q %q", c.text, id, name, ok, c.id, c.name)
		}
	}
}

func TestTaskMetadata(t *testing.T) {
	text := "Task 1.3: Wire it\nEstimated Time: 2 hours\nDepends on: Task 1.1, Task 1-2\nAcceptance Criteria:\n[ ] first\n- [ ] second\n[x] done already\nNext paragraph\n[ ] not a criterion"
	task, ok := parseTask(text)
	if !ok {
		t.Fatal("not a task")
	}
	want := Task{ID: "1.3", Name: "Wire it", Description: "Wire it", EstimatedTime: "2 hours",
		Dependencies: []string{"1.1", "1.2"}, AcceptanceCriteria: []string{"first", "second"}}
	if d := cmp.Diff(want, task); d != "" {
		t.Fatalf("task (-want +got):\n%s", d)
	}
	if deps := dependencies("Dependencies: database, cache"); !cmp.Equal(deps, []string{"database", "cache"}) {
		t.Errorf("word dependencies = %q", deps)
	}
	if deps := dependencies("Dependencies: None"); deps != nil {
		t.Errorf("None dependencies = %q", deps)
	}
}

func TestParseRefusals(t *testing.T) {
	if _, err := Parse(ParserSpecTasks, []byte("  \n")); err == nil {
		t.Error("empty tasks.md parsed")
	}
	if _, err := Parse(ParserSpecTasks, []byte("# Tasks\n\nNothing here.\n")); err != ErrNoPhases {
		t.Errorf("no phases: %v", err)
	}
	if _, err := Parse("jira_parser", []byte("x")); err == nil {
		t.Error("unknown parser accepted")
	}
	if _, err := Parse(ParserWorkflowDefinition, []byte("phases: [")); err == nil {
		t.Error("bad YAML accepted")
	}
}

func TestWorkflowDefinitionParser(t *testing.T) {
	src := `
phases:
  - number: 1
    name: Discovery
    purpose: Find out
    tasks:
      - number: 1
        name: ask
        purpose: Ask questions
        validation_criteria: [asked]
      - name: listen
    validation_gate:
      evidence_required:
        questions_asked:
          type: integer
          validator: positive
          description: How many questions
  - number: 2
`
	got, err := Parse(ParserWorkflowDefinition, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Phase{
		{Number: 1, Name: "Discovery", Description: "Find out", EstimatedDuration: "Variable",
			Tasks: []Task{
				{ID: "1.1", Name: "ask", Description: "Ask questions", EstimatedTime: "Variable", Dependencies: []string{}, AcceptanceCriteria: []string{"asked"}},
				{ID: "1.1", Name: "listen", EstimatedTime: "Variable", Dependencies: []string{}, AcceptanceCriteria: []string{}},
			},
			ValidationGate: []string{"questions_asked (integer, positive): How many questions"}},
		{Number: 2, Name: "Phase 2", EstimatedDuration: "Variable", Tasks: []Task{}, ValidationGate: []string{}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("phases (-want +got):\n%s", d)
	}
}

func TestRender(t *testing.T) {
	ctx := context.Background()
	p := Phase{Number: 1, Name: "Storage", Description: "Store", EstimatedDuration: "2h", ValidationGate: []string{"a", "b"},
		Tasks: []Task{{ID: "1.1", Name: "Table", Description: "Make it", EstimatedTime: "1h", AcceptanceCriteria: []string{"up"}}}}
	got, err := RenderPhase(ctx, "# Phase [PHASE_NUMBER]: [PHASE_NAME] ([TASK_COUNT] tasks, [ESTIMATED_DURATION])\n[PHASE_DESCRIPTION]\n[VALIDATION_GATE]\nnext [NEXT_PHASE_NUMBER]", p, 3)
	if want := "# Phase 3: Storage (1 tasks, 2h)\nStore\n- [ ] a\n- [ ] b\nnext 4"; got != want || err != nil {
		t.Errorf("RenderPhase = %q, %v; want %q", got, err, want)
	}
	got, err = RenderTask(ctx, "[TASK_ID] [TASK_NAME] in [PHASE_NUMBER] [PHASE_NAME]: [TASK_DESCRIPTION], [ESTIMATED_TIME], deps [DEPENDENCIES]\n[ACCEPTANCE_CRITERIA]\nnext [NEXT_TASK_NUMBER]", p, 3, p.Tasks[0], 1)
	if want := "1.1 Table in 3 Storage: Make it, 1h, deps None\n- [ ] up\nnext 2"; got != want || err != nil {
		t.Errorf("RenderTask = %q, %v; want %q", got, err, want)
	}
}

func FuzzParseTasksMD(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("..", "testdata", "specs", "2025-10-07-small-feature", "tasks.md"))
	f.Add(seed)
	f.Add([]byte("## Phase 1: A\n- [ ] **Task 1.1**: B\n  **Acceptance Criteria:**\n  - [ ] c\n"))
	f.Add([]byte("### 2. X\n#### Task 2.1: Y\nDependencies: 1.1\n"))
	for _, u := range hostileUnits {
		f.Add(fillTo(u, 64, 4<<10))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var phases []Phase
		var err error
		cost := workflowtest.MeasureQuick(func() { phases, err = Parse(ParserSpecTasks, data) })
		workflowtest.Request.Check(t, "parsing tasks.md", cost)
		if err != nil {
			return
		}
		for _, p := range phases {
			if p.Number < 1 || p.Name == "" || p.Tasks == nil || p.ValidationGate == nil {
				t.Fatalf("bad phase %+v", p)
			}
			for _, task := range p.Tasks {
				if task.ID == "" || task.Name == "" {
					t.Fatalf("bad task %+v", task)
				}
			}
		}
	})
}
