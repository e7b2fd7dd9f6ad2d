// berth-bench's TypeScript SDK client: one client per subject, the same
// tool call made on each in interleaved rounds, then each subject's
// latencies (ms) as one JSON object on stdout.
// Usage: node calls.mjs '<json>' where json is
//   {"calls": N, "round": R, "subjects": [{"name", "tool", "sse": url} | {"name", "tool", "command", "args", "env"}]}
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const spec = JSON.parse(process.argv[2]);
if (!(spec.calls > 0 && spec.calls <= 100000) || !(spec.round > 0)) throw new Error('calls 1..100000 and round > 0');

const subjects = [];
for (const s of spec.subjects) {
  const transport = s.sse
    ? new SSEClientTransport(new URL(s.sse))
    : new StdioClientTransport({ command: s.command, args: s.args, env: { ...process.env, ...(s.env ?? {}) }, stderr: 'inherit' });
  const client = new Client({ name: 'berth-bench', version: '1' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === s.tool)) {
    throw new Error(`${s.name}: no tool ${s.tool} among ${tools.map((t) => t.name).join(', ')}`);
  }
  subjects.push({ ...s, client, lat: [] });
}

async function call(s) {
  const r = await s.client.callTool({ name: s.tool, arguments: {} });
  if (r.isError) throw new Error(`${s.name}: ${s.tool} answered isError: ${JSON.stringify(r.content)}`);
}

// Two untimed rounds warm every path, then the timed rounds.
for (let w = 0; w < 2; w++) for (const s of subjects) for (let i = 0; i < spec.round; i++) await call(s);
for (let done = 0; done < spec.calls; done += spec.round) {
  const n = Math.min(spec.round, spec.calls - done);
  for (const s of subjects) {
    for (let i = 0; i < n; i++) {
      const t = process.hrtime.bigint();
      await call(s);
      s.lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
}
const out = {};
for (const s of subjects) out[s.name] = s.lat;
process.stdout.write(JSON.stringify(out) + '\n');
for (const s of subjects) await s.client.close();
