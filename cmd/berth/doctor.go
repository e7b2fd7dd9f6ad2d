package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker"
	"github.com/berth-dev/berth/broker/brokerconfig"
	"github.com/berth-dev/berth/broker/loopback"
	"github.com/berth-dev/berth/project/config"
	"github.com/berth-dev/berth/store"
)

// Levels of `berth doctor` findings. Only FAIL needs the user, and only
// FAIL makes the exit code 1 (docs/troubleshooting.md).
const (
	levelOK   = "ok"   // as it should be
	levelNote = "note" // worth knowing, nothing wrong
	levelWarn = "warn" // not as it should be, but Berth copes or repairs it by itself
	levelFail = "FAIL" // needs you: the line says what to do
)

// finding is one line of `berth doctor`.
type finding struct {
	level string
	what  string
	fix   string // FAIL: what to do; warn: what Berth does about it
}

// doctor collects findings about one home.
type doctor struct {
	home     string
	findings []finding
	projects map[string]string // root -> name of the projects it knows, for their configs
	served   map[string]bool   // roots the running broker serves now
	ports    map[int]string    // port -> root of the projects it knows (served now, or their last port)
}

func (d *doctor) ok(format string, a ...any)   { d.add(levelOK, fmt.Sprintf(format, a...), "") }
func (d *doctor) note(format string, a ...any) { d.add(levelNote, fmt.Sprintf(format, a...), "") }
func (d *doctor) warn(then, format string, a ...any) {
	d.add(levelWarn, fmt.Sprintf(format, a...), then)
}
func (d *doctor) fail(fix, format string, a ...any) {
	d.add(levelFail, fmt.Sprintf(format, a...), fix)
}
func (d *doctor) add(level, what, fix string) {
	d.findings = append(d.findings, finding{level, what, fix})
}

// runDoctor checks the broker's home, socket, lock, database, port range,
// every config it knows (the broker's, BERTH_ variables, projects', IDE
// files), the state files of the projects it knows, and versions. One line
// per finding. Exit 0 when nothing needs the user, 1 when a line says
// FAIL, 2 for a wrong command line.
func runDoctor(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageError{"takes no arguments"}
	}
	home, err := api.DefaultHome()
	if err != nil {
		return err
	}
	d := &doctor{home: home, projects: map[string]string{}, served: map[string]bool{}, ports: map[int]string{}}
	prog := startProgress("checking " + home)
	d.run(ctx)
	prog.end()
	failed := 0
	for _, f := range d.findings {
		line := fmt.Sprintf("%-4s  %s", f.level, f.what)
		switch {
		case f.level == levelFail:
			line += " -- fix: " + f.fix
			failed++
		case f.fix != "":
			line += " -- " + f.fix
		}
		fmt.Println(line)
	}
	if failed > 0 {
		return fmt.Errorf("%d problem(s) need you (the FAIL lines say what to do)", failed)
	}
	return nil
}

func (d *doctor) run(ctx context.Context) {
	cfg := d.checkConfig()
	if d.checkHome() {
		c := api.NewUnixClient(api.SocketPath(d.home))
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, herr := c.Health(hctx)
		cancel()
		running := herr == nil
		d.checkSocketAndLock(running, h)
		if running {
			d.checkRunning(ctx, c, h, cfg)
		} else {
			d.checkStopped(cfg)
		}
	}
	d.checkProjectConfigs(cfg)
	d.checkIDEFiles()
}

// checkHome: the home exists, is a directory of ours, closed to others.
func (d *doctor) checkHome() bool {
	fi, err := os.Stat(d.home)
	switch {
	case errors.Is(err, os.ErrNotExist):
		d.note("home %s does not exist yet (the first broker creates it)", d.home)
		return false
	case err != nil:
		d.fail("check the path and its permissions, or set BERTH_HOME", "home %s: %v", d.home, err)
		return false
	case !fi.IsDir():
		d.fail("move the file away or set BERTH_HOME to a directory", "home %s is not a directory", d.home)
		return false
	}
	if owner, mine := ownedByMe(fi); !mine {
		d.fail("use a home of your own (BERTH_HOME)", "home %s belongs to uid %d, not to you", d.home, owner)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		d.fail("chmod 700 "+d.home+" (a broker sets it when it starts)", "home %s has mode %04o: other accounts can read the token and the database", d.home, perm)
	} else {
		d.ok("home %s (mode %04o)", d.home, perm)
	}
	return true
}

func (d *doctor) checkSocketAndLock(running bool, h api.Health) {
	sock := api.SocketPath(d.home)
	_, serr := os.Lstat(sock)
	held, pid, lerr := broker.LockHolder(filepath.Join(d.home, api.LockName))
	switch {
	case lerr != nil:
		d.fail("check the permissions of "+d.home, "%v", lerr)
	case running && held && pid == h.PID:
		d.ok("broker pid %d answers on %s and holds the lock", h.PID, sock)
	case running:
		d.fail("stop the broker (`berth stop`) and start it again", "broker pid %d answers on %s but the lock names pid %d (held %v)", h.PID, sock, pid, held)
	case held:
		d.fail(fmt.Sprintf("`kill %d` (then `berth doctor` again)", pid), "broker pid %d holds the lock but does not answer on %s", pid, sock)
	case serr == nil:
		d.warn("the next broker replaces it", "stale socket %s: no broker answers on it", sock)
	default:
		d.note("no broker is running (a shim starts one; or `berth serve`)")
	}
}

// checkRunning asks the running broker: its repairs, versions, ports and
// the state files of the projects it serves.
func (d *doctor) checkRunning(ctx context.Context, c *api.Client, h api.Health, cfg *brokerconfig.Config) {
	if len(h.Warnings) == 0 {
		d.ok("database %s (checked by the running broker at start)", filepath.Join(d.home, api.DBName))
	}
	for _, w := range h.Warnings {
		d.warn("repaired at start; this line goes at the next restart", "broker reported at start: %s", w)
	}
	if h.LogError != "" {
		d.fail("as it says; the broker serves on meanwhile", "%s", h.LogError)
	}
	// Compatibility is the protocol's: versions may be "(devel)" or pseudo-versions.
	switch mine := api.Protocol(); {
	case h.Protocol < mine && h.Autostarted:
		d.warn("the next berth-shim of this version restarts it once nobody uses it; or `berth stop`", "broker %s (protocol %d) is older than this berth %s (protocol %d)", h.Version, h.Protocol, api.Version, mine)
	case h.Protocol < mine:
		d.fail("`berth stop`; the next shim or `berth serve` starts this version", "broker %s (protocol %d) is older than this berth %s (protocol %d)", h.Version, h.Protocol, api.Version, mine)
	case h.Protocol > mine:
		d.fail("install the same version of berth and berth-shim", "this berth %s (protocol %d) is older than the broker %s (protocol %d)", api.Version, mine, h.Version, h.Protocol)
	case h.Version == api.Version:
		d.ok("versions: berth and broker %s (protocol %d)", api.Version, mine)
	default:
		d.ok("versions: berth %s and broker %s speak the same protocol (%d)", api.Version, h.Version, mine)
	}
	ps, err := c.Projects(ctx)
	if err != nil {
		d.fail("`berth stop` and start again; see "+filepath.Join(d.home, api.LogName), "list projects: %v", err)
		return
	}
	mine := map[int]bool{}
	for _, p := range ps {
		mine[p.Port] = true
		d.projects[p.Root] = p.Name
		d.served[p.Root] = true
		if p.Port > 0 {
			d.ports[p.Port] = p.Root
		}
		d.checkStateFile(p.Name, p.Root, h.PID, p.Port, true)
		d.checkToolCount(ctx, c, p)
		for _, m := range p.Missing {
			d.fail("the broker keeps trying; see docs/troubleshooting.md", "project %s: %s", p.Name, m)
		}
		if p.Index != nil && p.Index.LastError != "" {
			d.fail("as it says; searches answer from what is indexed meanwhile", "project %s: search index error: %s", p.Name, p.Index.LastError)
		}
	}
	for _, r := range h.Refused {
		d.fail(refusalFix(r), "project %s was refused %s: %s", r.Root, agoText(r.Time), r.Error)
	}
	if h.PortStart > 0 && h.PortEnd >= h.PortStart {
		d.checkPorts(h.PortStart, h.PortEnd, mine)
	} else if cfg != nil {
		d.checkPorts(cfg.PortStart, cfg.PortEnd, mine)
	}
}

// checkStopped reads the database itself (nobody holds it) and checks the
// state files of the projects it knows.
func (d *doctor) checkStopped(cfg *brokerconfig.Config) {
	path := filepath.Join(d.home, api.DBName)
	if !fileExists(path) {
		d.note("no database yet (%s)", path)
	} else if db, err := store.OpenReadOnly(path, time.Second); err != nil {
		if errors.Is(err, store.ErrCorrupt) {
			d.warn("the next broker moves it aside and rebuilds it, keeping the workflow sessions it can read", "database: %v", err)
		} else {
			d.fail("stop the process that holds it; only the broker opens berth.db", "database: %v", err)
		}
	} else {
		recs, bad, err := db.Projects()
		db.Close()
		if err != nil {
			d.fail("start the broker: it rebuilds what it cannot read", "database registry: %v", err)
		} else {
			d.ok("database %s (%d projects known)", path, len(recs))
		}
		for _, id := range bad {
			d.warn("the broker skips it", "registry record %s cannot be read", id)
		}
		for _, r := range recs {
			d.projects[r.Root] = r.Name
			if r.LastPort > 0 {
				d.ports[r.LastPort] = r.Root
			}
			d.checkStateFile(r.Name, r.Root, 0, 0, false)
		}
	}
	if cfg != nil {
		d.checkPorts(cfg.PortStart, cfg.PortEnd, nil)
	}
	d.note("version: berth %s (commit %s, protocol %d; no broker running)", api.Version, api.Commit, api.Protocol())
}

// checkStateFile compares a project's state file with what serves it:
// served says the broker pid serves it on port; else no broker runs.
func (d *doctor) checkStateFile(name, root string, pid, port int, served bool) {
	if _, err := os.Stat(filepath.Join(root, api.ProjectDir)); err != nil {
		switch {
		case served:
		case isFolder(root):
			d.note("folder %s: %s is in no project (no %s/): served to the windows open on it, with no state file", name, root, api.ProjectDir)
		default:
			d.note("project %s: %s is gone", name, root)
		}
		return
	}
	p := api.StatePath(root)
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		if served {
			d.fail("detach and attach it again (reopen the IDE window, or `berth attach`)", "project %s is served but has no state file %s", name, p)
		}
		return
	}
	if err != nil {
		d.fail("check its permissions", "project %s: %v", name, err)
		return
	}
	sf, err := api.ParseStateFile(raw)
	switch {
	case err != nil:
		d.fail("remove it; the next attach writes it again", "project %s: %s: %v", name, p, err)
	case !served:
		d.warn("the next broker removes it (sub-agents that read it now find no server)", "project %s: stale state file %s names broker pid %d, and no broker runs", name, p, sf.PID)
	case sf.PID != pid:
		d.fail("reopen the IDE window or `berth attach` it again", "project %s: state file names pid %d, the broker is pid %d", name, sf.PID, pid)
	case sf.Port != nil && *sf.Port != port:
		d.fail("reopen the IDE window or `berth attach` it again", "project %s: state file names port %d, the broker serves it on %d", name, *sf.Port, port)
	default:
		d.ok("project %s: state file matches (pid %d, port %s)", name, pid, portText(sf.Port))
	}
}

// isFolder reports whether root is still a folder Berth serves in no
// project: a registry record of one has no .praxis-os/ and no state file.
func isFolder(root string) bool {
	r, err := api.ResolveFolder(root)
	return err == nil && r == root
}

// checkPorts counts the ports of the range that something other than the
// broker's mounts holds.
func (d *doctor) checkPorts(start, end int, mine map[int]bool) {
	total, taken := end-start+1, 0
	for p := start; p <= end; p++ {
		if mine[p] {
			continue
		}
		ln, err := loopback.Listen(p) // as the broker binds: a port whose [::1] side is taken is taken
		if err != nil {
			taken++
			continue
		}
		ln.Close()
	}
	free := total - taken - len(mine)
	switch {
	case free <= 0:
		d.fail("widen ports.start/ports.end in the broker's config (see the config line above), or free ports", "port range %d-%d: no free port (%d held by other programs)", start, end, taken)
	default:
		d.ok("port range %d-%d: %d free, %d used by projects, %d by other programs", start, end, free, len(mine), taken)
	}
}

func portText(p *int) string {
	if p == nil {
		return "none (stdio)"
	}
	return strconv.Itoa(*p)
}

// checkToolCount warns when a served project offers more tools (its own
// and its hosted servers') than its mcp.max_tools_warning: the broker
// logs it once, and some clients degrade past that many.
func (d *doctor) checkToolCount(ctx context.Context, c *api.Client, p api.Project) {
	cfg, err := config.Load(p.Root)
	if err != nil || cfg.MCP.MaxToolsWarning <= 0 {
		return // a config that does not load is reported with the configs
	}
	detail, err := c.Project(ctx, p.ID)
	if err != nil {
		return
	}
	own, _ := detail.Detail["tools"].([]any)
	n := len(own)
	if list, err := c.Servers(ctx, p.Root); err == nil {
		for _, ps := range list.Projects {
			for _, s := range ps.Servers {
				n += s.Tools
			}
		}
	}
	if n > cfg.MCP.MaxToolsWarning {
		d.warn("some clients degrade past that many: trim a hosted server with servers.<name>.tools (allow/deny) or mcp.enabled_tool_groups, or raise mcp.max_tools_warning",
			"project %s offers %d tools, more than its mcp.max_tools_warning (%d)", p.Name, n, cfg.MCP.MaxToolsWarning)
	}
}
