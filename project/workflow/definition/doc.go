// Package definition reads the workflow definitions a project keeps under its
// workflows folder (by default .praxis-os/workflows), in the on-disk format
// praxis-os projects already use:
//
//	<workflows>/<workflow_type>/
//	  metadata.json                     workflow_type, version, total_phases (int or "dynamic"),
//	                                    description, category, estimated_duration,
//	                                    primary_outputs, phases[] (unknown keys are ignored)
//	  phases/<N>/phase.md               the phase overview
//	  phases/<N>/task-<K>-<slug>.md     the task files named in metadata (or found by name)
//	  phases/<N>/gate-definition.yaml   checkpoint {strict, allow_override} and evidence_schema
//
// Phases are numbered from 0 when phases/0/ exists, else from 1. A phase without a
// gate file has a permissive gate. Gates may declare checks per evidence field
// (min, max, pattern, enum, min_length); the praxis-os validators and
// cross_field_validation entries are Python lambdas, which are never evaluated:
// each is reported as an "unsupported validator, not checked" warning.
//
// [LoadAll] never fails on a broken workflow: the workflow is returned with its
// Err set so that it can be listed with the reason. Files are read through an
// [os.Root] so that no name in a definition can reach outside its folder.
package definition
