package api

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// ServerState is where a hosted MCP server is in its life, or why it does
// not run.
type ServerState string

// States of a hosted server that runs (or is supervised).
const (
	ServerStopped    ServerState = "stopped"    // not running: lazy and not used yet, or stopped
	ServerStarting   ServerState = "starting"   // process started, MCP handshake under way
	ServerRunning    ServerState = "running"    // answering
	ServerRestarting ServerState = "restarting" // exited or crashed; waiting out the backoff
	ServerFailed     ServerState = "failed"     // crashed too often; not restarted
)

// States of a declared server that Berth does not run.
const (
	ServerDisabled      ServerState = "disabled"       // enabled: false
	ServerNeedsApproval ServerState = "needs approval" // declared by the project and not approved (or changed since)
	ServerInvalid       ServerState = "invalid"        // its name cannot prefix tools; see LastError
	ServerNotMounted    ServerState = "not mounted"    // approved (or the user's), but the project is not served now
	ServerShadowed      ServerState = "shadowed"       // the project declares a name the broker's config declares too: the broker's is served
)

// ServerOrigin says who declared a server.
type ServerOrigin string

// Origins of a declaration.
const (
	OriginProject ServerOrigin = "project" // the project's .praxis-os config: runs only once approved
	OriginUser    ServerOrigin = "user"    // the broker's own config: trusted
)

// ServerStatus is one declared MCP server as a project sees it: `berth
// servers`, the dashboard, get_server_info.
type ServerStatus struct {
	Name      string       `json:"name"`  // the tool prefix in this project
	State     ServerState  `json:"state"` // see the Server* states
	Origin    ServerOrigin `json:"origin"`
	Declared  string       `json:"declared_in,omitempty"` // the file declaring it: the project's config, or the broker's for origin user
	Share     string       `json:"share"`
	Command   string       `json:"command"` // command line or url, for display
	PID       int          `json:"pid,omitempty"`
	RSSBytes  uint64       `json:"rss_bytes,omitempty"` // resident memory of the process and its children
	Restarts  int          `json:"restarts"`
	Tools     int          `json:"tools"`  // tools served in this project (after the allow/deny list)
	Calls     uint64       `json:"calls"`  // requests this project forwarded to it (tools, prompts, resources)
	Errors    uint64       `json:"errors"` // of those, the ones that failed (its own JSON-RPC errors included)
	StartedAt time.Time    `json:"started_at,omitzero"`
	LastError string       `json:"last_error,omitempty"`
	Fix       string       `json:"fix,omitempty"` // the command that gets it running, when one does
	Digest    string       `json:"digest"`
	// Definition is every field the approval covers and what they reach.
	Definition *ServerDefinition `json:"definition,omitempty"`
	// Changed says what differs from the approval of a server that waits
	// for approval again: "servers.x (its definition)", "file server.js".
	Changed []string `json:"changed,omitempty"`
	// Withheld counts the tools the server offers that its tools filter
	// now allows and the approved one did not: they are served once the
	// server is approved again.
	Withheld int `json:"withheld_tools,omitempty"`
}

// ServerDefinition is a declared server as the broker runs it: every
// field its approval covers, and what they reach (the program, the
// working directory, the project's files it runs, the roots it is told),
// with the values that change what runs said plainly.
type ServerDefinition struct {
	Command string            `json:"command,omitempty"` // as declared
	Program string            `json:"program,omitempty"` // the file that runs: the command found on the broker's PATH, or relative to the working directory
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"` // as declared
	Dir     string            `json:"dir,omitempty"` // the working directory it runs in
	URL     string            `json:"url,omitempty"`
	Share   string            `json:"share"`
	Roots   []string          `json:"roots"`      // what Berth answers its roots/list with
	RootsOf string            `json:"roots_from"` // "roots" (its setting), "args" (folders its args name), "project" (the project root)
	Files   []ServerFile      `json:"files,omitempty"`
	Tools   ServerTools       `json:"tools,omitzero"`
	// Warnings name the values that change what runs beyond the command
	// line: an env variable through which a program loads code, a working
	// directory outside the project, roots outside it.
	Warnings []string `json:"warnings,omitempty"`
	// Problems say why it cannot run as declared (a command that does not
	// exist); an approval is refused while there is one.
	Problems []string `json:"problems,omitempty"`
}

// ServerFile is a file of the project a server runs (its command, or an
// argument or code-loading env value naming a regular file inside the
// project): the approval covers its content.
type ServerFile struct {
	Path   string `json:"path"`             // relative to the project root when inside it
	Target string `json:"target,omitempty"` // the file a link leads to, when Path is a link
	SHA256 string `json:"sha256"`
}

// ServerTools is a server's tools filter (servers.NAME.tools).
type ServerTools struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// ProjectServers is one project's declared servers.
type ProjectServers struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Root    string         `json:"root"`
	Mounted bool           `json:"mounted"`
	Servers []ServerStatus `json:"servers"`
}

// ServerList is the body of GET /servers.
type ServerList struct {
	Projects []ProjectServers `json:"projects"`
}

// ApproveRequest is the body of POST /servers/approve (control socket
// only): approve the project's declared servers as they are defined now.
type ApproveRequest struct {
	Root string `json:"root"`
	// Servers names the servers to approve; empty approves every server
	// the project declares.
	Servers []string `json:"servers,omitempty"`
	// OtherWriters approves even though another account owns, or may
	// write, the project's config or a file the approval covers (refused
	// with other_writers without it).
	OtherWriters bool `json:"other_writers,omitempty"`
}

// ApprovedServer is one definition an approval recorded.
type ApprovedServer struct {
	Name       string           `json:"name"`
	Command    string           `json:"command"` // what it runs, as approved (a summary line)
	Digest     string           `json:"digest"`
	Definition ServerDefinition `json:"definition"` // exactly what was approved
	// ShadowedBy is set when the approval was recorded but the server is
	// not served: the broker's config declares the same name.
	ShadowedBy string `json:"shadowed_by,omitempty"`
}

// ApproveResponse is the answer to POST /servers/approve.
type ApproveResponse struct {
	Approved []ApprovedServer `json:"approved"`
	Project  ProjectServers   `json:"project"` // the servers after the approval
}

// RevokeRequest is the body of POST /servers/revoke (control socket
// only): withdraw the approval of the project's declared servers.
type RevokeRequest struct {
	Root string `json:"root"`
	// Servers names the servers whose approval to withdraw; empty withdraws
	// every approval the project has.
	Servers []string `json:"servers,omitempty"`
}

// RestartRequest is the body of POST /servers/restart (control socket
// only): start a failed server of a mounted project again.
type RestartRequest struct {
	Root   string `json:"root"`
	Server string `json:"server"`
}

// Servers calls GET /servers: every mounted project's servers, or with
// root set, that project's (mounted or not).
func (c *Client) Servers(ctx context.Context, root string) (ServerList, error) {
	path := "/servers"
	if root != "" {
		path += "?root=" + url.QueryEscape(root)
	}
	var r ServerList
	return r, c.do(ctx, http.MethodGet, path, nil, &r)
}

// ApproveServers calls POST /servers/approve (control socket only).
func (c *Client) ApproveServers(ctx context.Context, req ApproveRequest) (ApproveResponse, error) {
	var r ApproveResponse
	return r, c.do(ctx, http.MethodPost, "/servers/approve", req, &r)
}

// RevokeServers calls POST /servers/revoke (control socket only) and
// returns the project's servers afterwards.
func (c *Client) RevokeServers(ctx context.Context, req RevokeRequest) (ProjectServers, error) {
	var r ProjectServers
	return r, c.do(ctx, http.MethodPost, "/servers/revoke", req, &r)
}

// RestartServer calls POST /servers/restart (control socket only) and
// returns the project's servers afterwards.
func (c *Client) RestartServer(ctx context.Context, req RestartRequest) (ProjectServers, error) {
	var r ProjectServers
	return r, c.do(ctx, http.MethodPost, "/servers/restart", req, &r)
}
