package hosted

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the broker the parent of every process its
// servers orphan (PR_SET_CHILD_SUBREAPER): a grandchild that calls setsid
// and whose parent exits is re-parented to the broker instead of init, so
// the broker can end it and reap it.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	pid, ppid, pgid int
	state           byte
}

// processes lists every process /proc shows.
func processes() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procStat, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		out = append(out, procStat{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]})
	}
	return out
}

// killTagged sends SIGKILL to every process whose TagEnv value matches,
// and returns their pids. A process that cleared its environment carries
// no tag: as the broker's adopted child it is ended by killAdopted.
func killTagged(match func(tag string) bool) []int {
	self := os.Getpid()
	key := []byte(TagEnv + "=")
	var killed []int
	for _, p := range processes() {
		if p.pid == self || p.state == 'Z' {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, key); ok && match(string(v)) {
				if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
					killed = append(killed, p.pid)
				}
				break
			}
		}
	}
	return killed
}

// killAdopted sends SIGKILL to the broker's children that are neither a
// server (leaders) nor in the broker's own process group (the programs it
// runs itself, such as git, are): processes its servers orphaned.
func killAdopted(leaders map[int]bool) []int {
	self, group := os.Getpid(), syscall.Getpgrp()
	var killed []int
	for _, p := range processes() {
		if p.ppid == self && p.pgid != group && !leaders[p.pid] && p.state != 'Z' {
			if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
				killed = append(killed, p.pid)
			}
		}
	}
	return killed
}

// reapAdopted waits for the killed processes that are the broker's
// children (at most a second each) and collects every adopted child that
// has exited: a zombie child of the broker outside its process group that
// is no server's leader (a leader's status belongs to the goroutine
// waiting for it).
func reapAdopted(leaders map[int]bool, killed []int) {
	self, group := os.Getpid(), syscall.Getpgrp()
	for _, pid := range killed {
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if got == pid || errors.Is(err, syscall.ECHILD) {
				break // reaped, or not our child
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, p := range processes() {
		if p.ppid == self && p.pgid != group && p.state == 'Z' && !leaders[p.pid] {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}
