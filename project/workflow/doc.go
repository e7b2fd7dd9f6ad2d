// Package workflow is a project's workflow engine: it runs the phase-gated
// workflows defined under the project's workflows folder (see package
// definition for the format), keeps their sessions in the broker's bbolt
// database, and offers them as MCP tools.
//
// A session is shared by every client of the project (the IDE and its
// sub-agents): starting the same workflow for the same target file resumes
// the active session, and completing a phase checks its gate first, then
// checks and sets the session in one short store transaction, so of two
// concurrent completions exactly one advances. Nothing a repository or a
// client controls runs inside a transaction (berth.db is every project's):
// a dynamic workflow's source is parsed, and a gate checked (its lambdas
// in a child process, under limits: package lambdaproc), before it.
//
// # Bucket layout
//
// The engine owns the area data/<project id>/workflow of the store:
//
//	workflow/
//	  sessions/   <session id> -> JSON Session (session_id, workflow_type, target_file,
//	              current_phase, completed_phases, phase_artifacts {N: {evidence, timestamp}},
//	              checkpoints {N: pending|passed|failed|skipped}, created_at, updated_at,
//	              total_phases, first_phase, status, options, metadata, imported_from,
//	              skipped_phases, plan {source, sha256, parser, parsed_at, first_phase,
//	              phases[]} for a dynamic workflow: its generated phases, fixed at start)
//	  summaries/  <session id> -> JSON SessionSummary, what listings and completions read
//	              (written with each session; a session without one is decoded whole)
//	  active/     <workflow_type> NUL <target_file> -> session id of the active session
//	              that start_workflow resumes (removed when the session completes or is deleted)
//	  imports/    <praxis-os state file name> -> JSON {session_id, imported_at}
//	              (so that each .praxis-os/.cache/state/*.json file imports once)
//
// The area is user progress: it is never dropped or rebuilt.
//
// # Dynamic workflows
//
// A dynamic workflow (spec_execution_v1) runs its static phases, then the
// phases its source gives: start_workflow reads the source the options name
// (options.spec_path: a spec folder's tasks.md), parses it (package
// dynamic) and stores the result as the session's plan. Phase and task
// content is rendered from the workflow's templates when asked for; each
// generated phase has a strict gate asking for its task ids and its
// validation gate's criteria. The plan never changes under a session: a
// broker restart resumes it as it was, and an edit of tasks.md shows only
// as a warning in get_workflow_state.
//
// # Lock order
//
// A store transaction may take Engine.mu (to look a definition up); code
// holding Engine.mu never opens a transaction.
package workflow
