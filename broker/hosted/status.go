package hosted

import (
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/project/textcut"
	"github.com/shirou/gopsutil/v4/process"
)

// status is the upstream's part of a Status.
func (u *upstream) status() Status {
	u.mu.Lock()
	st := Status{
		Name: u.label, State: u.state, Share: u.def.Share, Command: summary(commandLine(u.def.Command, u.def.Args, u.def.URL)),
		Restarts: u.restarts, StartedAt: u.startedAt, LastError: u.lastErr, Digest: u.def.Digest(),
	}
	if u.state == StateRunning && u.gen != nil && u.gen.p != nil {
		st.PID = u.gen.p.pid
	}
	u.mu.Unlock()
	if st.PID != 0 {
		st.RSSBytes = u.rss.get(st.PID)
	}
	return st
}

// rssEvery bounds how often a server's RSS is read: reading it scans
// /proc for the children, and get_server_info, the dashboard and
// /metrics all ask for statuses.
const rssEvery = time.Second

// rssCache keeps a server's last RSS reading.
type rssCache struct {
	mu  sync.Mutex // held while reading: one reading at a time per server
	pid int
	at  time.Time
	v   uint64
}

func (c *rssCache) get(pid int) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid != pid || time.Since(c.at) >= rssEvery {
		c.pid, c.at, c.v = pid, time.Now(), treeRSS(pid)
	}
	return c.v
}

// treeRSS is the resident memory of pid and its direct children (npx and
// shell wrappers run the real server as a child); 0 when unreadable.
func treeRSS(pid int) uint64 {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0
	}
	procs := []*process.Process{p}
	if kids, err := p.Children(); err == nil {
		procs = append(procs, kids...)
	}
	var total uint64
	for _, q := range procs {
		if mi, err := q.MemoryInfo(); err == nil {
			total += mi.RSS
		}
	}
	return total
}

// maxSummary bounds the one-line command of a status: the definition
// carries every value.
const maxSummary = 200

// summary cuts a command line to maxSummary bytes (on a rune boundary).
func summary(line string) string { return textcut.Cut(line, maxSummary, "…") }

// commandLine shows a definition for people: the url, or the command and
// its arguments (quoted when they hold spaces).
func commandLine(command string, args []string, url string) string {
	if url != "" {
		return url
	}
	parts := []string{command}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
