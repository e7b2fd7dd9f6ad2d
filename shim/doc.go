// Package shim is what an IDE runs: it finds its project, attaches to the
// broker (starting one if none answers), saying which transport the state
// file should offer (the broker writes that file), and forwards MCP
// messages between its stdin/stdout and the broker. It links only api and
// the WebSocket library: never the engine, the store or the broker
// (cmd/berth-shim/deps_test.go).
package shim
