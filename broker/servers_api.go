package broker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker/hosted"
	"github.com/berth-dev/berth/broker/mounttable"
	"github.com/berth-dev/berth/project/config"
)

// Servers implements controlapi.Backend: the hosted servers of every
// mounted project that declares some, or of the project at root, mounted
// or not.
func (b *Broker) Servers(_ context.Context, root string) (api.ServerList, error) {
	list := api.ServerList{Projects: []api.ProjectServers{}}
	if root == "" {
		for _, m := range b.mounts.All() {
			if ps := b.mountServers(m); len(ps.Servers) > 0 {
				list.Projects = append(list.Projects, ps)
			}
		}
		slices.SortFunc(list.Projects, func(x, y api.ProjectServers) int { return strings.Compare(x.Root, y.Root) })
		return list, nil
	}
	ps, err := b.projectServers(root)
	if err != nil {
		return list, err
	}
	list.Projects = append(list.Projects, ps)
	return list, nil
}

// projectServers describes the servers of the project at root: live when
// it is mounted, else as its config declares them.
func (b *Broker) projectServers(root string) (api.ProjectServers, error) {
	root, err := b.mounts.ServersRoot(root)
	if err != nil {
		return api.ProjectServers{}, err
	}
	id := api.ProjectID(root)
	if m, _, err := b.mounts.Get(id); err == nil {
		return b.mountServers(m), nil
	}
	cfg, err := config.Load(root)
	if err != nil {
		return api.ProjectServers{}, api.Errorf(http.StatusBadRequest, api.CodeProjectBroken, "%v", err)
	}
	ps := api.ProjectServers{
		ID: id, Name: filepath.Base(root), Root: root,
		Servers: nonNil(b.mounts.Hosted().Describe(id, root, cfg.Servers)),
	}
	b.declaredIn(ps.Servers, cfg.File)
	return ps, nil
}

// mountServers is the mount's servers as they run.
func (b *Broker) mountServers(m *mounttable.Mount) api.ProjectServers {
	ps := m.Servers()
	if m.HasHostedServers() {
		b.declaredIn(ps.Servers, m.Engine().Config().File)
	}
	return ps
}

// declaredIn names the file that declares each server: projectFile for
// the project's own, the broker's config for the user's.
func (b *Broker) declaredIn(servers []api.ServerStatus, projectFile string) {
	for i := range servers {
		if servers[i].Origin == api.OriginUser {
			servers[i].Declared = b.configFile
		} else {
			servers[i].Declared = projectFile
		}
	}
}

// ApproveServers records the user's approval of the servers the project
// at req.Root declares, as they are defined now and with what they reach
// now (the program, the project's files they run, their roots), and
// serves them at once when the project is mounted. Nothing is recorded
// when one of them cannot run as declared (cannot_run), or, without
// req.OtherWriters, when another account owns or may write the project's
// config or a file the approval covers (other_writers). It is served on
// the control socket only.
func (b *Broker) ApproveServers(ctx context.Context, req api.ApproveRequest) (api.ApproveResponse, error) {
	root, err := api.ResolveRoot(req.Root)
	if err != nil {
		return api.ApproveResponse{}, api.Errorf(http.StatusBadRequest, api.CodeNotProject, "%v", err)
	}
	cfg, err := config.Load(root)
	if err != nil {
		return api.ApproveResponse{}, api.Errorf(http.StatusBadRequest, api.CodeProjectBroken, "%v (fix it, then approve again)", err)
	}
	if len(cfg.Servers) == 0 {
		return api.ApproveResponse{}, api.Errorf(http.StatusNotFound, api.CodeNoServers,
			"%s declares no MCP servers: nothing to approve (servers are declared under servers: in %s, see docs/servers.md)", root, orDefault(cfg.File, ".praxis-os/config.yaml"))
	}
	decls, err := declaredServers(root, cfg, req.Servers, "")
	if err != nil {
		return api.ApproveResponse{}, err
	}
	id := api.ProjectID(root)
	var approve []api.ServerStatus
	var cannot []string
	for _, st := range hosted.Describe(hosted.ProjectSpec{ID: id, Root: root}, b.mounts.Hosted().Decls(decls)) {
		if st.Origin != api.OriginProject || st.Definition == nil {
			continue
		}
		for _, p := range st.Definition.Problems {
			cannot = append(cannot, st.Name+": "+p)
		}
		approve = append(approve, st)
	}
	if len(cannot) > 0 {
		return api.ApproveResponse{}, api.Errorf(http.StatusConflict, api.CodeCannotRun,
			"nothing was approved: %s", strings.Join(cannot, "; "))
	}
	if others := otherWriters(root, cfg.File, approve); len(others) > 0 && !req.OtherWriters {
		return api.ApproveResponse{}, api.Errorf(http.StatusConflict, api.CodeOtherWriters,
			"nothing was approved: %s; another account could change what runs as you after you approve it. Fix the owner or mode, or approve anyway with --other-writers if you trust every account that can write them", strings.Join(others, "; "))
	}
	approvals := b.mounts.Hosted().Approvals()
	var resp api.ApproveResponse
	for _, st := range approve {
		if err := approvals.Approve(id, st.Name, decls[st.Name], st.Definition); err != nil {
			return api.ApproveResponse{}, err
		}
		a := api.ApprovedServer{Name: st.Name, Command: st.Command, Digest: st.Digest, Definition: *st.Definition}
		if st.State == api.ServerShadowed {
			a.ShadowedBy = "the broker's config"
		}
		resp.Approved = append(resp.Approved, a)
		b.log.Info("hosted server approved", "project", id, "server", st.Name, "command", st.Command, "digest", st.Digest,
			"files", len(st.Definition.Files), "other_writers", req.OtherWriters)
	}
	b.refreshServers(id)
	resp.Project, err = b.projectServers(root)
	return resp, err
}

// otherWriters names what an approval of servers in the project at root
// covers that another account (root aside) owns or may write: the project
// root, its .praxis-os folder and config file, and each file the servers
// run with every folder from it up to the project root (or its own folder,
// for a file outside the project a link leads to).
func otherWriters(root, file string, servers []api.ServerStatus) []string {
	paths := []string{root, filepath.Join(root, api.ProjectDir)}
	if file != "" {
		paths = append(paths, file)
	}
	for _, st := range servers {
		for _, f := range st.Definition.Files {
			for _, p := range []string{f.Path, f.Target} {
				if p == "" {
					continue
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(root, p)
				}
				paths = append(paths, p)
				for dir := filepath.Dir(p); dir != root && len(dir) > len(root) && strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
					paths = append(paths, dir)
				}
				if !strings.HasPrefix(p, root+string(filepath.Separator)) {
					paths = append(paths, filepath.Dir(p)) // a file outside: its own folder
				}
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := config.OnlyMeOrRootMayWrite(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			out = append(out, err.Error())
		}
	}
	return out
}

// declaredServers is the definitions of the named servers in cfg, of all
// of them when names is empty; a name cfg does not declare is an
// unknown_server error that lists what it declares (and hint).
func declaredServers(root string, cfg config.Config, names []string, hint string) (map[string]config.Server, error) {
	if len(names) == 0 {
		return cfg.Servers, nil
	}
	decls := make(map[string]config.Server, len(names))
	for _, name := range names {
		s, ok := cfg.Servers[name]
		if !ok {
			declared := slices.Sorted(maps.Keys(cfg.Servers))
			return nil, api.Errorf(http.StatusNotFound, api.CodeUnknownServer,
				"%s declares no server %q (it declares: %s%s)", root, name, strings.Join(declared, ", "), hint)
		}
		decls[name] = s
	}
	return decls, nil
}

// RevokeServers withdraws the approval of the named servers of the
// project at req.Root, or of all its servers when none is named: a mounted
// project stops them at once and its sessions lose their tools. It works
// on a project whose config no longer loads, so that distrust never waits
// on a fix. It is served on the control socket only.
func (b *Broker) RevokeServers(_ context.Context, req api.RevokeRequest) (api.ProjectServers, error) {
	root, err := api.ResolveRoot(req.Root)
	if err != nil {
		return api.ProjectServers{}, api.Errorf(http.StatusBadRequest, api.CodeNotProject, "%v", err)
	}
	if len(req.Servers) > 0 {
		if cfg, err := config.Load(root); err == nil {
			hint := fmt.Sprintf("; `berth servers revoke %s` withdraws every approval", root)
			if _, err := declaredServers(root, cfg, req.Servers, hint); err != nil {
				return api.ProjectServers{}, err
			}
		}
	}
	id := api.ProjectID(root)
	if err := b.mounts.Hosted().Approvals().Revoke(id, req.Servers...); err != nil {
		return api.ProjectServers{}, fmt.Errorf("revoke the approvals of %s: %w", root, err)
	}
	b.log.Info("hosted server approval revoked", "project", id, "servers", orDefault(strings.Join(req.Servers, ","), "all"))
	b.refreshServers(id)
	return b.projectServers(root)
}

// RestartServer starts a failed hosted server of a mounted project again,
// or ends a running one's process and starts it again (served on the
// control socket only).
func (b *Broker) RestartServer(ctx context.Context, req api.RestartRequest) (api.ProjectServers, error) {
	root, err := b.mounts.ServersRoot(req.Root)
	if err != nil {
		return api.ProjectServers{}, err
	}
	m, _, err := b.mounts.Get(api.ProjectID(root))
	if err != nil {
		return api.ProjectServers{}, err
	}
	if !m.HasHostedServers() {
		return api.ProjectServers{}, api.Errorf(http.StatusNotFound, api.CodeUnknownServer, "no hosted server %q runs in %s", req.Server, root)
	}
	restarted, err := m.RestartHosted(ctx, req.Server)
	switch {
	case errors.Is(err, hosted.ErrNoSuchServer):
		return api.ProjectServers{}, api.Errorf(http.StatusNotFound, api.CodeUnknownServer,
			"no hosted server %q runs in %s (see `berth servers --project %s`)", req.Server, root, root)
	case err != nil:
		b.log.Warn("hosted server restart did not bring it back", "project", m.ID(), "server", req.Server, "err", err)
		return api.ProjectServers{}, api.Errorf(http.StatusBadGateway, api.CodeRestartFailed,
			"%v (see `berth servers --project %s`)", err, root)
	}
	ps := b.mountServers(m)
	if !restarted {
		state := api.ServerState("unknown")
		for _, s := range ps.Servers {
			if s.Name == req.Server {
				state = s.State
			}
		}
		return api.ProjectServers{}, api.Errorf(http.StatusConflict, api.CodeNotFailed,
			"hosted server %q of %s is %s: only a running or failed server is restarted (one starting or waiting out a crash restarts by itself; a lazy one starts at its first use)", req.Server, root, state)
	}
	b.log.Info("hosted server restarted", "project", m.ID(), "server", req.Server)
	return ps, nil
}

func nonNil(s []api.ServerStatus) []api.ServerStatus {
	if s == nil {
		return []api.ServerStatus{}
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// refreshServers decides the hosted servers of the mounted project id
// again after its approvals changed, and those of its sibling worktrees,
// whose approvals it shares.
func (b *Broker) refreshServers(id string) {
	var repo string
	if m, _, err := b.mounts.Get(id); err == nil {
		repo = m.RepositoryID()
	}
	for _, m := range b.mounts.All() {
		if m.ID() == id || repo != "" && m.RepositoryID() == repo {
			m.RefreshHosted()
		}
	}
}
