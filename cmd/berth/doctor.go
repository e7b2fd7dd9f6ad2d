package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/berth-dev/berth/api"
	"github.com/berth-dev/berth/broker"
	"github.com/berth-dev/berth/store"
)

// finding is one line of `berth doctor`.
type finding struct {
	level string // "ok", "note" or "FAIL"
	what  string
	fix   string // for FAIL: what to do
}

// doctor collects findings about one home.
type doctor struct {
	home     string
	findings []finding
}

func (d *doctor) ok(format string, a ...any)   { d.add("ok", fmt.Sprintf(format, a...), "") }
func (d *doctor) note(format string, a ...any) { d.add("note", fmt.Sprintf(format, a...), "") }
func (d *doctor) fail(fix, format string, a ...any) {
	d.add("FAIL", fmt.Sprintf(format, a...), fix)
}
func (d *doctor) add(level, what, fix string) {
	d.findings = append(d.findings, finding{level, what, fix})
}

// runDoctor checks the broker's home, socket, lock, database, port range,
// the state files of the projects it knows, and versions. One line per
// finding; exit 1 when something is wrong.
func runDoctor(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return usageError{"takes no arguments"}
	}
	home, err := api.DefaultHome()
	if err != nil {
		return err
	}
	d := &doctor{home: home}
	d.run(ctx)
	failed := 0
	for _, f := range d.findings {
		line := fmt.Sprintf("%-4s  %s", f.level, f.what)
		if f.fix != "" {
			line += " -- fix: " + f.fix
			failed++
		}
		fmt.Println(line)
	}
	if failed > 0 {
		return fmt.Errorf("%d problem(s) found in %s", failed, home)
	}
	return nil
}

func (d *doctor) run(ctx context.Context) {
	if !d.checkHome() {
		return
	}
	cfg := d.checkConfig()
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
		d.fail("chmod 700 "+d.home, "home %s has mode %04o: others can read the token and the socket", d.home, perm)
	} else {
		d.ok("home %s (mode %04o)", d.home, perm)
	}
	return true
}

// checkConfig reads the configuration the broker would use.
func (d *doctor) checkConfig() *broker.Config {
	v := broker.NewViper()
	if _, err := broker.ReadConfig(v, d.home, ""); err != nil {
		d.fail("fix the file (YAML) or move it away", "%v", err)
		return nil
	}
	cfg, err := broker.ConfigFrom(v, d.home)
	if err != nil {
		d.fail("fix the key it names in "+filepath.Join(d.home, api.ConfigName)+" or the BERTH_* variable", "config: %v", err)
		return nil
	}
	return &cfg
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
		d.fail("none needed to run (the next broker replaces it); or remove "+sock, "stale socket %s: no broker answers on it", sock)
	default:
		d.note("no broker is running (a shim starts one; or `berth serve`)")
	}
}

// checkRunning asks the running broker: its repairs, versions, ports and
// the state files of the projects it serves.
func (d *doctor) checkRunning(ctx context.Context, c *api.Client, h api.Health, cfg *broker.Config) {
	if len(h.Warnings) == 0 {
		d.ok("database %s (checked by the running broker at start)", filepath.Join(d.home, api.DBName))
	}
	for _, w := range h.Warnings {
		d.fail("nothing to repair; read it, keep or delete the old file, and restart the broker to clear this", "broker reported at start: %s", w)
	}
	switch cmp, ok := api.CompareVersions(h.Version, api.Version); {
	case !ok:
		d.note("versions: berth %s, broker %s (not comparable)", api.Version, h.Version)
	case cmp < 0:
		d.fail("`berth stop`; the next shim or `berth serve` starts this version", "broker %s is older than this berth %s", h.Version, api.Version)
	case cmp > 0:
		d.fail("install the same version of berth and berth-shim", "this berth %s is older than the broker %s", api.Version, h.Version)
	default:
		d.ok("versions: berth and broker %s", api.Version)
	}
	ps, err := c.Projects(ctx)
	if err != nil {
		d.fail("`berth stop` and start again; see "+filepath.Join(d.home, api.LogName), "list projects: %v", err)
		return
	}
	mine := map[int]bool{}
	for _, p := range ps {
		mine[p.Port] = true
		d.checkStateFile(p.Name, p.Root, h.PID, p.Port, true)
		for _, m := range p.Missing {
			d.fail("the broker keeps trying; see docs/troubleshooting.md", "project %s: %s", p.Name, m)
		}
	}
	if h.PortStart > 0 && h.PortEnd >= h.PortStart {
		d.checkPorts(h.PortStart, h.PortEnd, mine)
	} else if cfg != nil {
		d.checkPorts(cfg.PortStart, cfg.PortEnd, mine)
	}
}

// checkStopped reads the database itself (nobody holds it) and checks the
// state files of the projects it knows.
func (d *doctor) checkStopped(cfg *broker.Config) {
	path := filepath.Join(d.home, api.DBName)
	if !fileExists(path) {
		d.note("no database yet (%s)", path)
	} else if db, err := store.OpenReadOnly(path, time.Second); err != nil {
		if errors.Is(err, store.ErrCorrupt) {
			d.fail("none needed: the next broker moves it aside and rebuilds it (workflow sessions it can read are kept)", "database: %v", err)
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
			d.fail("none needed: the broker skips it", "registry record %s cannot be read", id)
		}
		for _, r := range recs {
			d.checkStateFile(r.Name, r.Root, 0, 0, false)
		}
	}
	if cfg != nil {
		d.checkPorts(cfg.PortStart, cfg.PortEnd, nil)
	}
	d.note("version: berth %s (no broker running)", api.Version)
}

// checkStateFile compares a project's state file with what serves it:
// served says the broker pid serves it on port; else no broker runs.
func (d *doctor) checkStateFile(name, root string, pid, port int, served bool) {
	if _, err := os.Stat(filepath.Join(root, api.ProjectDir)); err != nil {
		if !served {
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
		d.fail("remove it, or start the broker (it removes stale state files)", "project %s: stale state file %s names broker pid %d, and no broker runs", name, p, sf.PID)
	case sf.PID != pid:
		d.fail("reopen the IDE window or `berth attach` it again", "project %s: state file names pid %d, the broker is pid %d", name, sf.PID, pid)
	case sf.Port != nil && *sf.Port != port:
		d.fail("reopen the IDE window or `berth attach` it again", "project %s: state file names port %d, the broker serves it on %d", name, *sf.Port, port)
	default:
		d.ok("project %s: state file matches (pid %d, port %s)", name, pid, portText(sf.Port))
	}
}

// checkPorts counts the ports of the range that something other than the
// broker's mounts holds.
func (d *doctor) checkPorts(start, end int, mine map[int]bool) {
	total, taken := end-start+1, 0
	for p := start; p <= end; p++ {
		if mine[p] {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			taken++
			continue
		}
		ln.Close()
	}
	free := total - taken - len(mine)
	switch {
	case free <= 0:
		d.fail("widen ports.start/ports.end in "+filepath.Join(d.home, api.ConfigName)+" or free ports", "port range %d-%d: no free port (%d held by other programs)", start, end, taken)
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
