// Package api is the contract between Berth's processes and the programs
// that talk to them, and nothing else: the control API's wire types,
// paths and error codes, a typed client, the project state-file schema
// and its one writer (the broker), project identity (root resolution and
// ids), the broker's well-known paths, and the readiness protocol of
// `berth serve`. It links only the standard library, so the shim and any
// other client can use it; the broker's HTTP side is broker/controlapi.
package api
