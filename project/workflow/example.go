package workflow

import (
	"embed"
	"io/fs"
)

//go:embed testdata/workflows
var exampleFS embed.FS

// ExampleWorkflows is a small workflows folder for demos and tests: it holds
// bug_fix_v1, three phases (reproduce, fix, review) whose second phase has a
// strict gate. Copy it into a project with os.CopyFS(dir, ExampleWorkflows()),
// where dir is the project's workflows folder.
func ExampleWorkflows() fs.FS {
	sub, err := fs.Sub(exampleFS, "testdata/workflows")
	if err != nil {
		panic(err) // the path is fixed at build time
	}
	return sub
}
