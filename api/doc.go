// Package api holds what crosses process boundaries in Berth: the control
// API's wire types and routes, the project state-file schema, project
// identity (root resolution and ids), the broker's well-known paths, and a
// typed client. It imports no engine code, so the shim can link it.
package api
