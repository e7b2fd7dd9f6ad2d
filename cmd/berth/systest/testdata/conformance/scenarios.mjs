// Runs server scenarios of the MCP conformance suite one after another in
// one Node process:
//
//	node scenarios.mjs URL OUTDIR SCENARIO...
//
// The suite's CLI runs one scenario per process (or its whole suite, with
// scenarios Berth has no fixtures for), and loading its modules costs a
// process more CPU than the scenario itself. So this loads them once and
// runs the CLI once per scenario, exactly as `conformance server --url URL
// --scenario SCENARIO --output-dir OUTDIR/SCENARIO` does: each run is a
// fresh evaluation of the CLI's module (its own query string), reading the
// arguments from process.argv, and the process.exit that ends the CLI's
// command gives the scenario's exit code. The codes go to OUTDIR/exits.json
// ({"scenario": code}), the checks to OUTDIR/SCENARIO/*/checks.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const [url, outDir, ...scenarios] = process.argv.slice(2);
if (!url || !outDir || scenarios.length === 0) {
  console.error("usage: node scenarios.mjs URL OUTDIR SCENARIO...");
  process.exit(2);
}
const cli = new URL("./node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url);
const exit = process.exit;
const exits = {};
for (const [i, scenario] of scenarios.entries()) {
  const dir = join(outDir, scenario);
  mkdirSync(dir, { recursive: true });
  console.log(`=== scenario ${scenario}`);
  exits[scenario] = await new Promise((resolve) => {
    process.exit = (code) => resolve(code ?? 0);
    process.argv = [process.argv[0], fileURLToPath(cli), "server", "--url", url, "--scenario", scenario, "--output-dir", dir];
    import(`${cli.href}?run=${i}`).catch((err) => {
      console.error(`${scenario}: ${err?.stack ?? err}`);
      resolve(1);
    });
  });
  console.log(`=== scenario ${scenario} exit ${exits[scenario]}`);
}
process.exit = exit;
writeFileSync(join(outDir, "exits.json"), JSON.stringify(exits));
process.exit(0);
