package api

import "time"

// Health is the body of GET /health.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
	// Protocol is the broker's ProtocolVersion (absent from older brokers: 0).
	Protocol      int       `json:"protocol,omitempty"`
	PID           int       `json:"pid"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds float64   `json:"uptime_seconds"`
	Projects      int       `json:"projects"`
	Home          string    `json:"home"`
	IdleTimeout   string    `json:"idle_timeout,omitempty"`
	// PortStart and PortEnd are the range project ports are bound in.
	PortStart int `json:"port_start,omitempty"`
	PortEnd   int `json:"port_end,omitempty"`
	// Autostarted is true for a broker a shim started (it may be asked to restart).
	Autostarted bool `json:"autostarted,omitempty"`
	// Warnings name what the broker repaired or could not read at start
	// (a corrupt berth.db moved aside, workflow sessions it could not recover).
	Warnings []string `json:"warnings,omitempty"`

	// ConfigFile is the config file the broker read its settings from ("" for none).
	ConfigFile string `json:"config_file,omitempty"`
	// Refused are the projects whose last attach was refused, newest first.
	Refused []RefusedProject `json:"refused,omitempty"`

	// RSSBytes is the broker's resident memory (0 when the OS does not say).
	RSSBytes uint64 `json:"rss_bytes,omitempty"`
	// LogError says why the broker's log file cannot be written now, with
	// the fix; "" while it can.
	LogError string `json:"log_error,omitempty"`
}

// Project describes one mounted project (GET /projects, GET /projects/{id}).
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Root string `json:"root"`
	// Kind is KindProject (a root holding .praxis-os/) or KindFolder (a
	// folder in no project, served without standards nor state file);
	// absent from older brokers, which serve projects only.
	Kind      string    `json:"kind,omitempty"`
	Port      int       `json:"port"`
	URL       string    `json:"url"`
	Sessions  int       `json:"sessions"`
	Holders   int       `json:"holders"`
	Pinned    bool      `json:"pinned"`
	StartedAt time.Time `json:"started_at"`
	// Detail is the engine's status (index, workflows); only on GET /projects/{id}.
	Detail map[string]any `json:"detail,omitempty"`
	// SessionsByTransport splits Sessions by how they arrived (stdio, http, sse, websocket).
	SessionsByTransport map[string]int `json:"sessions_by_transport,omitempty"`
	// SessionsLive and SessionsIdle split Sessions by state (SessionLive, SessionIdle).
	SessionsLive int `json:"sessions_live"`
	SessionsIdle int `json:"sessions_idle"`
	// Transport is what the project's state file offers sub-agents
	// (TransportDual, TransportStdio or TransportHTTP); empty when the
	// broker has not written one.
	Transport string `json:"transport,omitempty"`
	// Index is the state of the project's search index; absent when the
	// project's rag tool group is off.
	Index *IndexState `json:"index,omitempty"`
	// Missing names what the broker cannot do for the project now (no
	// port for its HTTP endpoint, a state file it cannot write), each
	// with its fix; it keeps trying. Port is 0 and URL "" while it has
	// no port.
	Missing []string `json:"missing,omitempty"`
	// Repository is the git repository the project's root is a confirmed
	// worktree of; absent when it is none (docs/worktrees.md).
	Repository *Repository `json:"repository,omitempty"`
}

// Repository is a project's git repository and what its worktree has
// checked out. Projects with the same Repository.ID are worktrees of one
// repository.
type Repository struct {
	ID string `json:"id"`
	// Name is the main checkout's folder name (the common directory's for
	// a bare repository).
	Name string `json:"name"`
	// CommonDir is the repository's git directory.
	CommonDir string `json:"common_dir"`
	// Worktree is the linked worktree's name; "" for the main checkout.
	Worktree string `json:"worktree,omitempty"`
	// Branch is the checked-out branch; "" when the worktree is detached.
	Branch string `json:"branch,omitempty"`
	// Commit is the checked-out commit; "" on a branch with no commit yet.
	Commit string `json:"commit,omitempty"`
}

// IndexState is a project's search index in short.
type IndexState struct {
	// State is loading (reading the stored index), indexing (catching up
	// with the files), ready or closed.
	State    string `json:"state"`
	Files    int    `json:"files"`    // files indexed
	Sections int    `json:"sections"` // sections indexed
	// Done and Total count the files the current catch-up has examined
	// and has to examine, while it runs.
	Done  int `json:"done,omitempty"`
	Total int `json:"total,omitempty"`
	// LastError is the index's last error (reading the files or saving
	// the index, a full disk say): what it serves may be incomplete or not
	// saved for the next start.
	LastError string `json:"last_error,omitempty"`
}

// ProjectList is the body of GET /projects.
type ProjectList struct {
	Projects []Project `json:"projects"`
	// Repositories groups the projects that are worktrees of one git
	// repository (GroupRepositories); absent when none is.
	Repositories []RepositoryGroup `json:"repositories,omitempty"`
}

// RepositoryGroup is one git repository and its mounted worktrees.
type RepositoryGroup struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CommonDir string `json:"common_dir"`
	// Projects are the IDs of its worktrees' projects, in the order of
	// the project list.
	Projects []string `json:"projects"`
}

// GroupRepositories groups ps by Repository.ID, in the order each
// repository first appears in ps.
func GroupRepositories(ps []Project) []RepositoryGroup {
	var out []RepositoryGroup
	at := make(map[string]int)
	for _, p := range ps {
		r := p.Repository
		if r == nil {
			continue
		}
		i, ok := at[r.ID]
		if !ok {
			i = len(out)
			at[r.ID] = i
			out = append(out, RepositoryGroup{ID: r.ID, Name: r.Name, CommonDir: r.CommonDir})
		}
		out[i].Projects = append(out[i].Projects, p.ID)
	}
	return out
}

// Client kinds that hold a mount.
const (
	HolderShim = "shim" // released on DELETE or when its pid dies
	HolderCLI  = "cli"  // `berth attach`: pinned until `berth detach`
)

// AttachRequest is the body of POST /projects.
type AttachRequest struct {
	Root string `json:"root"`
	// Kind is HolderShim or HolderCLI; default HolderShim.
	Kind string `json:"kind,omitempty"`
	// PID of the attaching process; a shim's hold ends when it dies.
	PID int `json:"pid,omitempty"`
	// Version of the attaching program (absent from older shims).
	Version string `json:"version,omitempty"`
	// Protocol is the attaching program's ProtocolVersion (absent from older shims).
	Protocol int `json:"protocol,omitempty"`
	// Transport is how this holder uses the project: TransportDual (an IDE
	// on stdio that offers the HTTP port to sub-agents), TransportStdio (no
	// endpoint for others) or TransportHTTP (the port only). The broker
	// writes the state file from every holder's: default dual for a shim,
	// http for a pin.
	Transport string `json:"transport,omitempty"`
	// Folder asks, when Root is in no project (no .praxis-os/ in it or
	// above it), to serve Root as a folder (KindFolder) instead of
	// refusing it; a root in a project is served as that project. Shims
	// only: a pin (HolderCLI) of a folder is refused.
	Folder bool `json:"folder,omitempty"`
}

// AttachResponse is the answer to POST /projects.
type AttachResponse struct {
	Project
	// Lease names this attach; pass it to DELETE /projects/{id}?lease= to release exactly it.
	Lease string `json:"lease"`
	// BrokerPID is the broker's pid, the one its state files name.
	BrokerPID int `json:"broker_pid"`
	// Headers must accompany requests to the project's port (auth: token).
	Headers map[string]string `json:"headers,omitempty"`
	// BrokerVersion is the broker's own version (absent from older brokers).
	BrokerVersion string `json:"broker_version,omitempty"`
	// BrokerProtocol is the broker's ProtocolVersion (absent from older
	// brokers: 0); a shim decides by it whether the broker is older.
	BrokerProtocol int `json:"broker_protocol,omitempty"`
	// Warnings say what the attach could not do though it succeeded (the
	// state file could not be written); the shim logs them.
	Warnings []string `json:"warnings,omitempty"`
}

// ShutdownRequest is the body of POST /shutdown (control socket only).
type ShutdownRequest struct {
	// Reason is logged by the broker.
	Reason string `json:"reason,omitempty"`
	// IfUnheld refuses (409) when any mount is held by someone other than
	// ExceptLease, and when the broker was not auto-started: a shim asking
	// an older broker to make way uses it.
	IfUnheld    bool   `json:"if_unheld,omitempty"`
	ExceptLease string `json:"except_lease,omitempty"`
}

// ShutdownResponse is the answer to POST /shutdown: the broker is stopping.
type ShutdownResponse struct {
	PID int `json:"pid"`
}

// MaxBodyBytes caps control API request bodies.
const MaxBodyBytes = 64 << 10
