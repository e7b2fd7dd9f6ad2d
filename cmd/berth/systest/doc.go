// Package systest holds Berth's system tests: real `berth serve` and
// `berth-shim` processes (built once per run by broker/brokertest) on
// loopback ports and temporary homes, driven by real MCP clients (the
// go-sdk's, the TypeScript SDK's), the CLI and a browser. Each test
// cleans up every process it started, by its pid.
//
// BERTH_TEST_RACE=1 go test -race ./cmd/berth/systest builds the
// processes under test with the race detector too.
package systest
