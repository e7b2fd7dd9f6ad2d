package mounttable

import (
	"errors"
	"net/http"

	"github.com/berth-dev/berth/api"
)

// A folder in no project (api.KindFolder) is mounted for the shims of the
// windows open on it: its engine has no standards and no workflows
// (project.Options.Folder), its hosted servers are the user's (the broker
// config's), and nothing is written into it: no state file (publish and
// unpublish pass it over), so sub-agents find its endpoint in `berth
// projects` and GET /projects only. It is unmounted when it vanishes, and
// when it gains a .praxis-os/ folder: its shims attach again and get the
// project (vanish.go).

// attachRoot resolves the root of an attach: a project root (ResolveRoot),
// or with folder, the project root is in or, in none, root as a folder.
// A folder is for shims: a pin of one is refused, as are the folders
// api.ResolveFolder refuses.
func attachRoot(root string, folder bool, kind string) (string, bool, error) {
	if !folder {
		r, err := api.ResolveRoot(root)
		if err != nil {
			return "", false, api.Errorf(http.StatusBadRequest, api.CodeNotProject, "%v", err)
		}
		return r, false, nil
	}
	r, isFolder, err := api.RootOrFolder(root)
	switch {
	case errors.Is(err, api.ErrFolderRefused):
		return "", false, api.Errorf(http.StatusBadRequest, api.CodeFolderRefused, "%v", err)
	case err != nil:
		return "", false, api.Errorf(http.StatusBadRequest, api.CodeNotProject, "%v", err)
	case isFolder && kind == api.HolderCLI:
		return "", false, api.Errorf(http.StatusBadRequest, api.CodeFolderRefused,
			"%s is in no project: `berth attach` pins projects only; create %s/%s/ to make it one", r, r, api.ProjectDir)
	}
	return r, isFolder, nil
}

// kind is the mount's api.KindProject or api.KindFolder.
func (m *Mount) kind() string {
	if m.engine.Folder() {
		return api.KindFolder
	}
	return api.KindProject
}

// serversRoot resolves the root of a servers request (GET /servers?root=,
// a restart): a project root, or a folder in no project while it is
// mounted (its windows' user servers run there).
func (table *Table) ServersRoot(root string) (string, error) {
	r, err := api.ResolveRoot(root)
	if err == nil {
		return r, nil
	}
	if f, ferr := api.ResolveFolder(root); ferr == nil {
		if m, _, gerr := table.Get(api.ProjectID(f)); gerr == nil && m.engine.Folder() {
			return f, nil
		}
	}
	return "", api.Errorf(http.StatusBadRequest, api.CodeNotProject, "%v", err)
}
