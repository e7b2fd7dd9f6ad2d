package definition

import (
	"os"
	"path/filepath"
	"testing"
)

// writeTree writes files (slash paths relative to dir) and returns dir.
func writeTree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// with returns a copy of base with over applied; an empty value deletes.
func with(base map[string]string, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

const minimalMetadata = `{
  "workflow_type": "demo_v1",
  "version": "1.0",
  "total_phases": 2,
  "phases": [
    {"phase_number": 1, "phase_name": "One", "purpose": "first",
     "tasks": [{"task_number": 1, "name": "Only", "file": "task-1-only.md"}]},
    {"phase_number": 2, "phase_name": "Two", "purpose": "second"}
  ]
}`

const strictGate = `checkpoint:
  strict: true
  allow_override: false
evidence_schema:
  done:
    type: boolean
    required: true
`

// minimalTree is a valid two-phase workflow named demo_v1.
var minimalTree = map[string]string{
	"demo_v1/metadata.json":                    minimalMetadata,
	"demo_v1/phases/1/phase.md":                "# One\n",
	"demo_v1/phases/1/task-1-only.md":          "do it\n",
	"demo_v1/phases/1/gate-definition.yaml":    strictGate,
	"demo_v1/phases/2/phase.md":                "# Two\n",
	"demo_v1/phases/2/task-1-found-by-name.md": "found\n",
}

const dynamicMetadata = `{
  "workflow_type": "demo_v1",
  "total_phases": "dynamic",
  "phases": [
    {"phase_number": 0, "phase_name": "Plan", "tasks": [{"task_number": 1, "name": "read", "file": "task-1-read.md"}]},
    {"phase_number": "1-N", "phase_name": "Dynamic phases", "purpose": "the spec's phases"}
  ],
  "dynamic_phases": true,
  "dynamic_config": {"source_path_key": "spec_path", "parser": "spec_tasks_parser",
    "templates": {"phase": "phases/dynamic/phase-template.md", "task": "phases/dynamic/task-template.md"}}
}`

// dynamicTree is a dynamic workflow shaped like spec_execution_v1.
var dynamicTree = map[string]string{
	"demo_v1/metadata.json":                    dynamicMetadata,
	"demo_v1/phases/0/phase.md":                "# Plan\n",
	"demo_v1/phases/0/task-1-read.md":          "read the spec\n",
	"demo_v1/phases/dynamic/phase-template.md": "# Phase [PHASE_NUMBER]: [PHASE_NAME]\n[VALIDATION_GATE]\n",
	"demo_v1/phases/dynamic/task-template.md":  "# Task [TASK_ID]: [TASK_NAME]\n[ACCEPTANCE_CRITERIA]\n",
}
