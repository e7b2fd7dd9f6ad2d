package broker

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/api"
)

// maxRefusals bounds the refused projects the dashboard lists.
const maxRefusals = 20

// refusals remembers the projects whose mount was refused (a config that
// does not load, no free port), newest first, so the dashboard can say
// why a window gets no tools. A project is forgotten once it mounts.
type refusals struct {
	mu   sync.Mutex
	list []api.RefusedProject
}

// note records the outcome of an attach of root: a refusal of the project
// (its config, its port) is kept and reported true; a success forgets the
// project. Other errors (a bad request, a stopping broker) are not the
// project's.
func (r *refusals) note(root string, err error) bool {
	var ae *api.Error
	if err != nil && (!errors.As(err, &ae) || !slices.Contains([]api.Code{api.CodeBadConfig, api.CodeProjectBroken, api.CodePortsExhausted}, ae.Code)) {
		return false
	}
	if real, rerr := api.ResolveRoot(root); rerr == nil {
		root = real
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.IndexFunc(r.list, func(p api.RefusedProject) bool { return p.Root == root })
	if err == nil {
		if i >= 0 {
			r.list = slices.Delete(r.list, i, i+1)
		}
		return false
	}
	p := api.RefusedProject{Root: root, ID: api.ProjectID(root), Error: ae.Message, Code: ae.Code, Time: time.Now().UTC(), Count: 1}
	if i >= 0 {
		p.Count += r.list[i].Count
		r.list = slices.Delete(r.list, i, i+1)
	}
	r.list = slices.Insert(r.list, 0, p)
	if len(r.list) > maxRefusals {
		r.list = r.list[:maxRefusals]
	}
	return true
}

func (r *refusals) snapshot() []api.RefusedProject {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}
