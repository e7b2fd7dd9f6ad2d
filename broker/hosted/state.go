package hosted

import "github.com/berth-dev/berth/api"

// State is where a hosted server is in its life (api.ServerState: the
// control API, the dashboard and get_server_info carry it as it is).
type State = api.ServerState

// States of a server process (or url connection).
const (
	StateStopped    = api.ServerStopped    // not running: lazy and not used yet, or stopped
	StateStarting   = api.ServerStarting   // process started, MCP handshake under way
	StateRunning    = api.ServerRunning    // answering
	StateRestarting = api.ServerRestarting // exited or crashed; waiting out the backoff
	StateFailed     = api.ServerFailed     // crashed MaxCrashes times within CrashWindow; not restarted
)

// States of a declared server that Berth does not run.
const (
	StateDisabled      = api.ServerDisabled      // enabled: false
	StateNeedsApproval = api.ServerNeedsApproval // declared by the project and not approved (or changed since)
	StateInvalid       = api.ServerInvalid       // its name cannot prefix tools; see LastError
	StateShadowed      = api.ServerShadowed      // the broker's config declares the same name, and that one is served
)

// Origin says who declared a server.
type Origin = api.ServerOrigin

// Origins of a declaration.
const (
	OriginProject = api.OriginProject // the project's .praxis-os config: runs only once approved
	OriginUser    = api.OriginUser    // the broker's own config: trusted
)

// Status is one declared server as a project sees it: for `berth
// servers`, the dashboard and get_server_info.
type Status = api.ServerStatus
