// Runs the MCP Inspector's CLI several times in one Node process, each run
// as its launcher runs `mcp-inspector --cli ARGS...` (the launcher imports
// the CLI and calls its runCli with the arguments):
//
//	node inspector-runs.mjs RUNS ARGS...
//
// Loading the CLI costs a process more CPU than a run, so a test that runs
// it many times loads it once. Each run opens its own client and session.
// A run's output follows a line "=== run N"; a run that fails ends the
// process through the CLI's own error handler (its exit code and JSON
// error envelope), as under the launcher.
import { runCli, handleError } from "./node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js";

const [runs, ...args] = process.argv.slice(2);
const n = Number(runs);
if (!Number.isInteger(n) || n < 1 || args.length === 0) {
  console.error("usage: node inspector-runs.mjs RUNS ARGS...");
  process.exit(2);
}
for (let i = 0; i < n; i++) {
  console.log(`=== run ${i}`);
  try {
    await runCli([process.argv[0], "mcp-inspector", ...args]);
  } catch (err) {
    await handleError(err);
  }
}
