// Package shim is what an IDE runs: it finds its project, attaches to the
// broker (starting one if none answers), writes the project's state file and
// forwards MCP messages between its stdin/stdout and the broker. It links
// only api: never the engine or the store.
package shim
