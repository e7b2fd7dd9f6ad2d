package api

import "time"

// Dashboard is the state the dashboard's event stream (GET /events) sends.
type Dashboard struct {
	Health   Health             `json:"health"`
	Projects []DashboardProject `json:"projects"`
	// Logs are the broker's last log lines, oldest first.
	Logs []LogLine `json:"logs"`
	// Transports are the MCP transports projects serve, in order (the keys
	// of Project.SessionsByTransport).
	Transports []string `json:"transports"`
}

// RefusedProject is a project the broker would not mount, and why (its
// config does not load, no port is free). It is listed until it mounts.
type RefusedProject struct {
	Root  string    `json:"root"`
	ID    string    `json:"id"`
	Error string    `json:"error"`
	Code  Code      `json:"code"`
	Time  time.Time `json:"time"`  // the last refusal
	Count int       `json:"count"` // refusals since the broker started
}

// DashboardProject is a project with its engine status and recent tool calls.
type DashboardProject struct {
	Project
	// Calls are the project's recent tool calls, newest first.
	Calls []ToolCall `json:"calls"`
	// Servers are the MCP servers the broker hosts for the project.
	Servers []ServerStatus `json:"servers,omitempty"`
	// Clients are the project's MCP sessions, oldest first.
	Clients []Session `json:"clients"`
}

// ToolCall is one MCP tool call a project answered.
type ToolCall struct {
	Time       time.Time `json:"time"`
	Tool       string    `json:"tool"`
	Transport  string    `json:"transport"`
	DurationMS float64   `json:"duration_ms"`
	OK         bool      `json:"ok"`
	Error      string    `json:"error,omitempty"`
}

// LogLine is one broker log record.
type LogLine struct {
	Time    time.Time         `json:"time"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Project string            `json:"project,omitempty"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}
