//go:build !berthtest

package mounttable

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addTestHold adds nothing: the test tool exists only in binaries built
// for the system tests (testhold.go).
func addTestHold(*mcp.Server) {}
