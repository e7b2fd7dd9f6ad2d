package api

import "time"

// Version is Berth's version, reported by /health and `berth version`.
var Version = "0.1.0-dev"

// Health is the body of GET /health.
type Health struct {
	Status        string    `json:"status"`
	Version       string    `json:"version"`
	PID           int       `json:"pid"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds float64   `json:"uptime_seconds"`
	Projects      int       `json:"projects"`
	Home          string    `json:"home"`
	IdleTimeout   string    `json:"idle_timeout,omitempty"`
}

// Project describes one mounted project (GET /projects, GET /projects/{id}).
type Project struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Root      string    `json:"root"`
	Port      int       `json:"port"`
	URL       string    `json:"url"`
	Sessions  int       `json:"sessions"`
	Holders   int       `json:"holders"`
	Pinned    bool      `json:"pinned"`
	StartedAt time.Time `json:"started_at"`
	// Detail is the engine's status (index, workflows); only on GET /projects/{id}.
	Detail map[string]any `json:"detail,omitempty"`
}

// ProjectList is the body of GET /projects.
type ProjectList struct {
	Projects []Project `json:"projects"`
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
}

// AttachResponse is the answer to POST /projects.
type AttachResponse struct {
	Project
	// Lease names this attach; pass it to DELETE /projects/{id}?lease= to release exactly it.
	Lease string `json:"lease"`
	// BrokerPID is the pid written into the state file.
	BrokerPID int `json:"broker_pid"`
	// Headers must accompany requests to the project's port (auth: token).
	Headers map[string]string `json:"headers,omitempty"`
}

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
}

// MaxBodyBytes caps control API request bodies.
const MaxBodyBytes = 64 << 10
