// Package store is Berth's only owner of the bbolt database ($BERTH_HOME/berth.db).
//
// Nothing outside this package imports bbolt: callers get a [DB], open an
// [Area] (one project's slice of one subsystem) and read or write it through a
// [Bucket] inside a single transaction. Bytes returned by [Bucket.Get] are
// copies and stay valid after the transaction ends.
//
// # Bucket tree
//
//	meta/                       schema_version -> uint64, big endian
//	registry/                   <project id> -> JSON record (root, name, pinned, last port, last used)
//	data/
//	  <project id>/
//	    index/                  owned by project/search (derived; dropped and rebuilt when corrupt or of another format)
//	      meta/                 format -> uint32 BE; next_chunk -> uvarint; updated_at -> RFC 3339
//	      files/                <rel path> -> size, mtime, SHA-256 prefix, skip reason, chunk ids
//	      chunks/               <chunk id, 4 bytes BE> -> file, heading path, lines, body offset, field lengths, title, tags, phase, text
//	      postings/             <term> -> count, then (chunk id delta, body tf, heading count) uvarint triples
//	                            (every value in files/, chunks/ and postings/ ends with a CRC-32C, big endian)
//	    workflow/               owned by project/workflow (never dropped: user progress)
//	      sessions/             <session id> -> JSON session (fields in project/workflow's package doc)
//	      summaries/            <session id> -> JSON summary of the session, what listings read
//	      active/               <workflow_type> NUL <target_file> -> id of the active session start_workflow resumes
//	      imports/              <praxis-os state file name> -> JSON {session_id, imported_at} (so a file imports once)
//	    servers/                owned by broker/hosted (user decisions: dropped only when damage leaves them unproven)
//	      <server name>         -> JSON {digest, command, approved_at, files, roots, tools}: the approved definition of a project-declared server
//	    sessions/               owned by broker/mcpserve (sessionstore.go; not salvaged: clients initialize again)
//	      <Mcp-Session-Id>      -> JSON {initialize, protocol_version, log_level, created_at, seen_at} of a streamable HTTP session
//
// The per-subsystem layouts are written down in the owning packages; the
// names of the top-level buckets and the schema version live here.
//
// # Migrations
//
// The schema version is the number of migrations applied. Migrations run in
// order at [Open], each in its own transaction; a database from a newer Berth
// (a version above [SchemaVersion]) is refused rather than touched.
//
// # Damage
//
// [Open] first proves, on a read-only open, that the file holds every page
// the database uses and that every bucket and value can be read (bbolt maps
// the file, so a truncated one would fault rather than fail: the walk turns
// faults into [ErrCorrupt]). The caller (the broker) then moves the file
// aside with [MoveAside], opens a fresh one and copies what can still be
// read with [Salvage]: the registry, every project's workflow state and
// the server approvals it can prove current (from the root of a file whose
// two meta pages are intact), never the derived indexes. [DB.Opening] says
// what Open found that bbolt would not: an empty file, or one damaged meta
// page (the file opened a transaction older). [PruneAside] bounds the
// copies moved aside. [OpenReadOnly] is the same check for a reader
// that must not write (`berth doctor`).
package store
