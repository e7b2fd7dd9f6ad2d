// Package mcpserve serves one mount's MCP sessions: the transports that
// reach its server (streamable HTTP, SSE, WebSocket and the shim's
// bridge), the session book that knows each session's transport and
// activity, the session rule and mcp.max_tool_calls (Limits), the
// streamable HTTP sessions saved in berth.db (Store), the tool calls seen
// (Observer), and the checks a POST's body passes first (CheckPosts). The
// broker makes one of each per mount and chains their middleware
// (broker/mounttable/mount.go); a busy project never slows another.
//
// # Lock order
//
// Book.mu guards the book's map and every session entry in it; only the
// book's own methods (sessions.go) take it, and nothing outside the
// package sees an entry. Store.mu guards the saved sessions' records.
// Neither is held while the other is taken: the store asks the book for
// its sessions' activity (lastSeen) and the book is asked for its list
// before the store is asked which are saved (Clients). Observer.mu is a
// leaf. No lock of the package is held while a callback set by the caller
// runs (Limits.End, Limits.Counted, the Observer's onCall), a session is
// closed, or berth.db is written.
package mcpserve
