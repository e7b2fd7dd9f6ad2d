package api

import "time"

// Request headers of the control API.
const (
	// LeaseHeader carries the lease of a live attach on the shim's route
	// (/projects/{id}/mcp): only the holder of a project reaches its tools
	// through the control API.
	LeaseHeader = "Berth-Lease"
	// ClientHeader marks a control-API request as a program's, not a web
	// page's: a page of another origin cannot send it without a CORS
	// preflight, which Berth never grants. Mutating requests that look like
	// a browser's (an Origin, a form or text body) need it or the token.
	ClientHeader = "Berth-Client"
)

// DashboardLink is the answer to POST /dashboard/link (control socket
// only): a one-time link that logs a browser into the dashboard.
type DashboardLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// DashboardLoginRequest is the body of POST /dashboard/login: the code of
// a DashboardLink, redeemed by the dashboard page once.
type DashboardLoginRequest struct {
	Code string `json:"code"`
}

// DashboardSession is the answer to POST /dashboard/login: the key the page
// sends as "Authorization: Bearer <key>" until the broker stops.
type DashboardSession struct {
	Key string `json:"key"`
}
