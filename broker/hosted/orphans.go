//go:build unix

package hosted

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/shirou/gopsutil/v4/process"
)

// RecordFile is the file in BERTH_HOME where a broker keeps the process
// groups of the servers it runs, so that the next broker ends what a
// broker killed with -9 left running.
const RecordFile = "servers.pids"

// TagEnv is the environment variable every server process (and what it
// starts, unless it clears its environment) carries: the broker's home,
// hashed, and the process's own tag. It finds, on Linux, the processes a
// server started that left its process group (setsid).
const TagEnv = "BERTH_HOSTED_TAG"

// tracker knows the server processes of one broker: it records their
// process groups with their leaders' start times in the record file, tags
// them, ends what they leave behind, and (Linux) reaps the processes it
// adopts as their subreaper. Its mutex is held while a server process
// starts and while adopted processes are reaped, so that a reap never
// takes a server's exit status from the goroutine that waits for it.
type tracker struct {
	file   string // "" when the pool keeps no record (tests)
	prefix string // the tags of this home: "<hash>."
	log    *slog.Logger

	mu     sync.Mutex
	groups map[int]trackedGroup // by process group id
}

// trackedGroup is one server process group, as recorded.
type trackedGroup struct {
	PGID   int    `json:"pgid"`
	Start  int64  `json:"start_ms"` // the leader's start time, ms since the epoch
	Tag    string `json:"tag"`
	Server string `json:"server"`
}

// newTracker returns the tracker of the broker whose home is home ("" for
// none: nothing is recorded nor ended at start). With a home, it first
// ends what the previous broker of that home left: the recorded groups
// whose leader still is the recorded process (or whose leader is gone but
// the group is not), and on Linux every process carrying a tag of this
// home; and it makes the broker the subreaper of what its servers orphan.
func newTracker(home string, log *slog.Logger) *tracker {
	t := &tracker{log: log, groups: map[int]trackedGroup{}}
	if home == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		t.prefix = hex.EncodeToString(b[:]) + "." // this pool's alone
		return t
	}
	sum := sha256.Sum256([]byte(home))
	t.prefix = hex.EncodeToString(sum[:8]) + "."
	t.file = filepath.Join(home, RecordFile)
	t.endLeftovers()
	if err := becomeSubreaper(); err != nil {
		log.Warn("cannot adopt what hosted servers orphan (subreaper): a process that leaves its server's group is found by its tag only", "err", err)
	}
	return t
}

// newTag is a fresh tag for one server process.
func (t *tracker) newTag() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return t.prefix + hex.EncodeToString(b[:])
}

// start runs start (which starts a process and returns its pid, 0 when it
// failed) with the tracker's lock held, and records the process's group.
func (t *tracker) start(server, tag string, start func() int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pid := start()
	if pid <= 0 {
		return
	}
	g := trackedGroup{PGID: pid, Tag: tag, Server: server, Start: startTime(pid)}
	t.groups[pid] = g
	t.save()
}

// ended forgets a group whose leader has been reaped, after ending what is
// left of it and every process carrying its tag (those that left the
// group, on Linux), and reaps what of those the broker adopted.
func (t *tracker) ended(pgid int, tag string) {
	killGroup(pgid)
	killed := killTagged(func(v string) bool { return v == tag })
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.groups, pgid)
	reapAdopted(t.leaders(), killed)
	t.save()
}

// reap collects the adopted processes that have exited (zombies whose
// parent is the broker and which are no server's leader).
func (t *tracker) reap() {
	t.mu.Lock()
	defer t.mu.Unlock()
	reapAdopted(t.leaders(), nil)
}

// close ends every adopted process left once all servers stopped, and
// every process carrying this home's tag.
func (t *tracker) close() {
	killed := killTagged(func(v string) bool { return len(v) > len(t.prefix) && v[:len(t.prefix)] == t.prefix })
	t.mu.Lock()
	defer t.mu.Unlock()
	killed = append(killed, killAdopted(t.leaders())...)
	reapAdopted(t.leaders(), killed)
}

// leaders are the pids of the server processes running now. Called with
// mu held.
func (t *tracker) leaders() map[int]bool {
	out := make(map[int]bool, len(t.groups))
	for pgid := range t.groups {
		out[pgid] = true
	}
	return out
}

// save writes the record file (0600, atomically). Called with mu held.
func (t *tracker) save() {
	if t.file == "" {
		return
	}
	list := make([]trackedGroup, 0, len(t.groups))
	for _, g := range t.groups {
		list = append(list, g)
	}
	raw, _ := json.Marshal(list)
	tmp := t.file + ".tmp"
	err := os.WriteFile(tmp, raw, 0o600)
	if err == nil {
		err = os.Rename(tmp, t.file)
	}
	if err != nil {
		t.log.Warn("record the hosted server processes (what a broker killed with -9 leaves is ended by the next only when recorded)", "file", t.file, "err", err)
	}
}

// endLeftovers ends what the previous broker of this home left running.
func (t *tracker) endLeftovers() {
	raw, err := os.ReadFile(t.file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.log.Warn("read the record of hosted server processes", "file", t.file, "err", err)
	}
	var list []trackedGroup
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			t.log.Warn("the record of hosted server processes is unreadable; only tagged processes are ended", "file", t.file, "err", err)
		}
	}
	for _, g := range list {
		if g.PGID <= 1 {
			continue
		}
		if why := leftGroup(g); why != "" {
			killGroup(g.PGID)
			t.log.Warn("ended hosted server processes a previous broker left running", "server", g.Server, "pgid", g.PGID, "why", why)
		}
	}
	if killed := killTagged(func(v string) bool { return len(v) > len(t.prefix) && v[:len(t.prefix)] == t.prefix }); len(killed) > 0 {
		t.log.Warn("ended processes of hosted servers a previous broker left running (they had left their server's process group)", "pids", fmt.Sprint(killed))
	}
	t.mu.Lock()
	t.save()
	t.mu.Unlock()
}

// leftGroup says why the recorded group g is still one of ours, or ""
// when it is not (gone, or its leader's pid now belongs to another
// process). A pid in use as a process group id is never given to a new
// process, so a group that still exists while its leader is gone is the
// recorded one.
func leftGroup(g trackedGroup) string {
	if errors.Is(syscall.Kill(-g.PGID, 0), syscall.ESRCH) {
		return ""
	}
	if errors.Is(syscall.Kill(g.PGID, 0), syscall.ESRCH) {
		return "its leader is gone, the rest of its group is not"
	}
	if st := startTime(g.PGID); st != 0 && st == g.Start {
		return "its leader still runs"
	}
	return ""
}

// killGroup sends SIGKILL to every process of group pgid.
func killGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// startTime is pid's start time in ms since the epoch, 0 when unknown.
func startTime(pid int) int64 {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0
	}
	ms, err := p.CreateTime()
	if err != nil {
		return 0
	}
	return ms
}
