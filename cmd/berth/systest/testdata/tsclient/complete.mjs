// completion/complete through a Berth project's streamable HTTP port, with
// the TypeScript SDK, where nothing matches: a workflow prompt's
// target_file, an argument the prompt does not have, and a hosted prompt's
// argument. The SDK checks each answer against the specification (values
// is an array) and throws on any other.
// Driven by TestTypeScriptSDKCompletesWhereNothingMatches.
// Usage: node complete.mjs <url> <workflow prompt> <hosted prompt>
// It prints one JSON line: each completion's values, or the error it threw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, workflow, hosted] = process.argv.slice(2);
const client = new Client({ name: 'berth-complete', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

async function complete(name, argument, value) {
  try {
    const res = await client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: argument, value } });
    return { values: res.completion.values };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}
console.log(JSON.stringify({
  target: await complete(workflow, 'target_file', 'no-such-target-anywhere'),
  matched: await complete(workflow, 'target_file', 'READ'),
  other: await complete(workflow, 'no_such_argument', 'x'),
  hosted: await complete(hosted, 'department', 'no-such-department'),
}));
await client.close();
