// Package definition reads the workflow definitions a project keeps under its
// workflows folder (by default .praxis-os/workflows), in the on-disk format
// praxis-os projects already use, as praxis-os reads it:
//
//	<workflows>/<workflow_type>/
//	  metadata.json                     workflow_type, version, total_phases (int or "dynamic"),
//	                                    phases[] (phase_number as a number, text, or a range such
//	                                    as "1-N"; phase_name, purpose, file/phase_file, skippable,
//	                                    skip_condition, checkpoint.required_evidence, tasks[] from
//	                                    task 0), dynamic_phases, dynamic_config; unknown keys ignored
//	  phases/<N>/phase.md               the phase overview
//	  phases/<N>/task-<K>-<slug>.md     the task files named in metadata (or found by name)
//	  phases/<N>/gate-definition.yaml   checkpoint {strict, allow_override}, evidence_schema,
//	                                    validators and cross_field_validation (Python lambdas)
//	  phases/dynamic/*-template.md      a dynamic workflow's phase and task templates
//
// Phases are numbered from 0 when phases/0/ exists or metadata lists phase 0,
// else from 1. A phase without a gate file has a permissive gate, unless its
// metadata checkpoint names required_evidence. Gate lambdas are compiled
// when the gate is loaded (package pylambda), to refuse a gate Berth cannot
// enforce, and run on every check through a [Lambdas] (in a child process,
// under limits: package lambdaproc); patterns are bounded in size and cost
// (package pattern).
//
// Lenient where praxis-os is: a missing phase folder, overview or task file,
// a task without a number, or a field naming an undefined validator is a
// warning (the engine answers missing files from the standards search).
// Err is set only for what cannot run: unreadable metadata, a gate that
// does not parse or whose lambdas do not compile, a dynamic workflow without
// its parser or templates. [LoadAll] never fails on a broken workflow: the
// workflow is returned with its Err set so that it can be listed with the
// reason. Files are read through an [os.Root] so that no name in a definition
// can reach outside its folder.
package definition
