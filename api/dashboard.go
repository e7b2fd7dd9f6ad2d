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

// DashboardProject is a project with its engine status and recent tool calls.
type DashboardProject struct {
	Project
	// Calls are the project's recent tool calls, newest first.
	Calls []ToolCall `json:"calls"`
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
