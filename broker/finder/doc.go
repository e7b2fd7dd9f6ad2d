// Package finder keeps a project with many tools usable: a session in
// finder mode lists Berth's core tools and two more, find_tools, which
// ranks every tool the project offers (Berth's own and every hosted
// server's) for a task said in the agent's own words, and call_tool,
// which calls a found tool as a direct call would.
//
// # Pieces
//
//   - [Catalog] ranks a set of tools for a task with the project's
//     search engine (project/search's Fields: its analyzer and BM25F)
//     over each tool's name, description, parameters and server
//     (catalog.go). The task is read as an agent says it (query.go): its
//     words with the words related to them (related.go), a phrasal verb
//     as the verb it means ("look up" as "search"), a question by what it
//     asks for ("which ...?" a list), a value by its kind, not its own
//     words ("package.json" a file, 17 a number, Alice a name); a tool
//     scores the sum of the weighted BM25F scores of those terms
//     (rank.go).
//   - [Finder] is one mount's: its receiving middleware (Middleware)
//     shapes each session's tools/list by its [Mode] (the client's
//     ?tools= or --tools, else mcp.tools_listing; auto decides by the
//     client's name and mcp.finder_threshold) and answers find_tools and
//     call_tool; its sending middleware (Sending) tells one session its
//     listing changed when finder.promote adds a tool it called.
//   - [Cache] keeps, in berth.db, the tools each hosted server definition
//     listed when it last ran, so that a lazy server's tools are ranked
//     before it starts again.
//
// # Wiring (broker/mounttable/mount.go)
//
//	f := finder.New(finder.Options{Tools: eng.Tools, Config: eng.Config, Servers: hp.Status, Cache: finder.NewCache(db, id)})
//	srv.AddReceivingMiddleware(f.Middleware) // just outside the hosted servers' middleware
//	srv.AddSendingMiddleware(f.Sending)
//	// f.Changed() after each change of the hosted servers; f.Close() at unmount.
//
// # Concurrency
//
// What find_tools ranks (a view: the catalog and the notes on hosted
// servers) is built from a listing when the tools may have changed and
// swapped in through an atomic pointer; buildM serializes builds and is
// never held while mu is. mu guards the tools promoted in each session.
// One goroutine refreshes the view and the cache after each change.
package finder
