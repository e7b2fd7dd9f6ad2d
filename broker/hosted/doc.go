// Package hosted runs the other MCP servers a project uses and serves
// their tools, prompts and resources beside Berth's own, so that every
// window and sub-agent of a project shares one process per server.
//
// # Pieces
//
//   - [Pool] (one per broker) supervises the server processes. A share:
//     project server runs once per project and definition; a share: user
//     server once for every project declaring the same definition
//     (same digest), reference counted, and stopped when the last project
//     lets go. Each server runs in its own process group (on Linux with a
//     parent-death SIGKILL, so even a kill -9 of the broker leaves no
//     server), tagged and recorded by the pool's tracker (orphans.go: what
//     leaves the group is ended with it, and the next broker ends what a
//     killed one left), speaks MCP over its stdin/stdout through the go-sdk
//     client on a connection of Berth's (stdio.go: each line decoded once,
//     and a tools/call's result passed on as the server wrote it) or over
//     streamable HTTP for a url, keeps its last stderr lines, and is
//     restarted with exponential backoff when it exits; after MaxCrashes
//     within CrashWindow it is failed and left alone. States: stopped,
//     starting, running, restarting, failed.
//   - [Project] (one per mount) holds leases on the project's servers and
//     installs the namespaced surface on the project's *mcp.Server: tools
//     and prompts as <server>__<name> (schemas and annotations as the
//     server sent them, tools trimmed by the allow/deny list), resources
//     under the URIs their server gives them (so links in tool results
//     resolve; when two servers offer the same URI, the first by name
//     serves it). Calls forward arguments, results, errors, progress (the
//     caller's token mapped to one unique per server) and cancellation (the
//     caller's context; the SDK sends notifications/cancelled upstream).
//     [Project.Subscribe] forwards resources/subscribe for a hosted URI
//     (listed or matching a template); the server's
//     notifications/resources/updated go to the subscribed sessions; the
//     upstream is unsubscribed once no session wants the URI, and a
//     restarted server is subscribed again (subscribe.go).
//   - [Approvals] records, per project in berth.db, what the user approved
//     of each project-declared definition: its digest, and what it reaches
//     (reach.go: the project's files it runs with their SHA-256, the roots
//     it is told, its tools filter). A project-declared server that is not
//     approved, or whose definition or reach changed since, does not run
//     and reports StateNeedsApproval with what changed and the command
//     that approves it; a guard (guard.go) re-checks the reach every two
//     seconds and each process start checks the approved files first. A
//     tools filter widened since the approval serves only what the
//     approved one allowed. A project declaration of a name the broker's
//     config declares too is listed as StateShadowed. Every Status carries
//     the definition with its reach (api.ServerDefinition).
//
// # Wiring (the mount's part, broker/mounttable/servers.go)
//
// The broker makes one Pool at start and closes it at shutdown, after the
// mounts. A mount, once its engine's *mcp.Server exists:
//
//	decls := hosted.Decls(brokerCfg.Servers, eng.Config().Servers)
//	hp, err := pool.Open(ctx, hosted.ProjectSpec{ID: id, Name: name, Root: root, Log: log, Approvals: approvals, Echo: ringLog}, decls)
//	srv.AddReceivingMiddleware(hp.Middleware()) // lazy start on first list or call; capabilities
//	hp.Install(srv)                            // tools/prompts/resources, kept in step
//	hp.OnChange(func() { /* dashboard snapshot, max_tools_warning with hp.ToolCount() */ })
//
// The server's SubscribeHandler and UnsubscribeHandler call hp.Subscribe
// and hp.Unsubscribe for the URIs it does not serve itself (the engine
// does, through project.Hosted). On a config edit or an approval the mount
// calls hp.Update(ctx, decls); at unmount hp.Close(ctx) (before closing the
// server's sessions is fine).
// For people and metrics: hp.Status() (state, pid, RSS, restarts, tools,
// calls, errors, last error, the fix), hp.Serves(tool) (metrics labels),
// hp.Logs(name) (stderr lines), hp.Restart(ctx, name) (a failed or running server; returns once it serves again),
// pool.Processes() (every process across projects), and Describe (what a
// project that is not mounted would run). Approvals: hosted.NewApprovals(db)
// with Approve, Check and Revoke; pass it as ProjectSpec.Approvals.
// The SDK server sends notifications/tools/list_changed (and prompts,
// resources) to every session whenever Install's items change: when a
// server starts, restarts, fails, stops or reports a change of its lists.
//
// # Ownership and locks
//
// Each upstream's run goroutine owns its process and client session; its
// mutex is a leaf (nothing is called while it is held) and subscribers are
// poked without blocking. Pool.mu guards the table of upstreams and is never
// held while a server starts or stops. Project.updMu serializes Update and
// Close; Project.mu guards the entries and installed servers and is held
// while items are added to or removed from an *mcp.Server, so the lock order
// is Project.updMu, Project.mu, then the SDK server's lock. One goroutine per
// Project applies upstream changes.
//
// # Requests a server makes of its client
//
// roots/list is answered with the server's roots in the projects holding
// it (one project for share: project): its roots setting, else the folders
// its args name, else the project root (reach.go). sampling/createMessage and elicitation/create
// go to the session whose call caused them: exactly, for a server on MCP
// 2026-07-28 (they ride in the call's result); for older servers, when
// exactly one call is in flight on the server, else the server gets an
// error saying why. A caller session on 2026-07-28 cannot take a request
// mid-call, so it gets the SDK's error.
package hosted
