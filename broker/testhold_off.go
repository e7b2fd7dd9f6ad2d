//go:build !berthtest

package broker

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addTestHold adds nothing: the test tool exists only in binaries built
// for the system tests (testhold.go).
func addTestHold(*mcp.Server) {}
