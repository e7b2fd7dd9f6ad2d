package hosted

import (
	"context"
	"slices"
	"time"
)

// guard checks what the project's declarations reach every GuardEvery
// (Options) and plans them again when it changed: a file of the project a
// server runs that changes (a git pull, another account's edit), or roots
// that change, make the server wait for approval like a changed
// definition, within that time. Unchanged files are only stat'ed
// (hashFile's cache). It runs until Close.
func (p *Project) guard() {
	defer close(p.guardDone)
	t := time.NewTicker(p.pool.opts.GuardEvery)
	defer t.Stop()
	for {
		select {
		case <-p.guardStop:
			return
		case <-t.C:
		}
		if p.reachChanged() {
			p.updMu.Lock()
			err := p.update(context.Background(), p.decls)
			p.updMu.Unlock()
			if err != nil && err != errClosed {
				p.spec.Log.Warn("update hosted servers after a change of the files they run", "err", err)
			}
		}
	}
}

// reachChanged reports whether a project-declared server now reaches
// other files, roots or a program than when it was planned. The files are
// hashed outside every lock.
func (p *Project) reachChanged() bool {
	p.mu.Lock()
	var check []*entry
	for _, e := range p.entries {
		if e.decl.Origin != OriginUser && e.def != nil && e.state != StateDisabled && e.state != StateShadowed {
			check = append(check, e)
		}
	}
	p.mu.Unlock()
	for _, e := range check {
		now := definition(e.decl.Server, inspect(p.spec.Root, e.decl.Server, true))
		if now.Program != e.def.Program || !slices.Equal(now.Files, e.def.Files) || !slices.Equal(now.Roots, e.def.Roots) {
			return true
		}
	}
	return false
}
