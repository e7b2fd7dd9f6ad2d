package hosted

import "time"

// State is where a hosted server is in its life.
type State string

// States of a server process (or url connection).
const (
	StateStopped    State = "stopped"    // not running: lazy and not used yet, or stopped
	StateStarting   State = "starting"   // process started, MCP handshake under way
	StateRunning    State = "running"    // answering
	StateRestarting State = "restarting" // exited or crashed; waiting out the backoff
	StateFailed     State = "failed"     // crashed MaxCrashes times within CrashWindow; not restarted
)

// States of a declared server that Berth does not run.
const (
	StateDisabled      State = "disabled"       // enabled: false
	StateNeedsApproval State = "needs approval" // declared by the project and not approved (or changed since)
	StateInvalid       State = "invalid"        // its name cannot prefix tools; see LastError
)

// Origin says who declared a server.
type Origin string

// Origins of a declaration.
const (
	OriginProject Origin = "project" // the project's .praxis-os config: runs only once approved
	OriginUser    Origin = "user"    // the broker's own config: trusted
)

// Status is one declared server as a project sees it: for `berth
// servers`, the dashboard and get_server_info.
type Status struct {
	Name      string    `json:"name"`  // the tool prefix in this project
	State     State     `json:"state"` // see the State constants
	Origin    Origin    `json:"origin"`
	Share     string    `json:"share"`
	Command   string    `json:"command"` // command line or url, for display
	PID       int       `json:"pid,omitempty"`
	RSS       uint64    `json:"rss_bytes,omitempty"` // resident memory of the process and its children
	Restarts  int       `json:"restarts"`
	Tools     int       `json:"tools"`  // tools served in this project (after the allow/deny list)
	Calls     uint64    `json:"calls"`  // requests this project forwarded to it (tools, prompts, resources)
	Errors    uint64    `json:"errors"` // of those, the ones that failed (its own JSON-RPC errors included)
	StartedAt time.Time `json:"started_at,omitzero"`
	LastError string    `json:"last_error,omitempty"`
	Fix       string    `json:"fix,omitempty"` // the command that gets it running, when one does
	Digest    string    `json:"digest"`
}
