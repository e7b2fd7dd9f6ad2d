// Runs the TypeScript SDK client N times in a row against a project's
// streamable HTTP endpoint, as a sub-agent that runs often does: connect
// (initialize), one tool call, close. close() sends no DELETE: every
// session is left for the server to reclaim.
// Usage: node abandon.mjs <url> <runs>
// Prints {"ok": n, "failures": ["run i: error", ...]} and exits 0.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, runs = '1'] = process.argv.slice(2);
const out = { ok: 0, failures: [] };
for (let i = 0; i < Number(runs); i++) {
  const client = new Client({ name: 'berth-abandon', version: String(i) });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const res = await client.callTool({ name: 'get_server_info', arguments: {} });
    if (res.isError) throw new Error(JSON.stringify(res.content));
    out.ok++;
  } catch (e) {
    out.failures.push(`run ${i}: ${e.message ?? e}`);
  } finally {
    await client.close();
  }
}
console.log(JSON.stringify(out));
