//go:build unix && !linux

package hosted

import "syscall"

// procAttr puts the server in its own process group. macOS has no parent
// death signal: when the broker dies without stopping it, the server's
// stdin reaches EOF, on which a stdio MCP server exits (the spec's
// shutdown); one that ignores EOF is left running.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
