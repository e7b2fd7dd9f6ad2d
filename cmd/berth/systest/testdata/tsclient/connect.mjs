// Reach a Berth project's tools with the TypeScript MCP SDK, as a sub-agent does.
// Usage: node connect.mjs <project-root> [http|sse|websocket|stdio]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [root, transport = 'http'] = process.argv.slice(2);

// 1. Discover: the state file exists while the project is served. Trust it
//    only if the broker that wrote it is alive and its port answers for
//    this project.
function discover() {
  const state = JSON.parse(readFileSync(join(root, '.praxis-os', '.mcp_server_state.json'), 'utf8'));
  if (state.port === null) throw new Error('the IDE asked for stdio only: spawn berth-shim instead');
  process.kill(state.pid, 0); // throws ESRCH when the broker is gone
  return state;
}

async function probe(state) {
  const base = `http://${state.host}:${state.port}`;
  const res = await fetch(`${base}/`, { headers: state.headers ?? {} });
  const index = await res.json();
  if (!res.ok || index.project.root !== state.project.root) {
    throw new Error(`${base} does not serve ${state.project.root}: ${res.status}`);
  }
  return base;
}

// 2. Connect over the transport the agent speaks. `headers` carries the
//    bearer token when the broker runs with `auth: token`.
async function open() {
  if (transport === 'stdio') {
    // Like an IDE: the shim attaches (starting the broker if needed).
    return new StdioClientTransport({ command: 'berth-shim', args: ['--project', root], env: process.env });
  }
  const state = discover();
  const base = await probe(state);
  const headers = state.headers ?? {};
  switch (transport) {
    case 'http':
      return new StreamableHTTPClientTransport(new URL(state.url), { requestInit: { headers } });
    case 'sse':
      return new SSEClientTransport(new URL(`${base}/sse`), { requestInit: { headers } });
    case 'websocket':
      // Node 20 has no global WebSocket: lend the SDK the `ws` package's,
      // which can also send the headers.
      globalThis.WebSocket = class extends WebSocket {
        constructor(url, protocols) { super(url, protocols, { headers }); }
      };
      return new WebSocketClientTransport(new URL(`${base.replace('http', 'ws')}/ws`));
    default:
      throw new Error(`unknown transport ${transport}: use http, sse, websocket or stdio`);
  }
}

// 3. Verify: get_server_info names the project and the transport.
const client = new Client({ name: 'berth-tsclient', version: '1.0.0' });
await client.connect(await open());
const { tools } = await client.listTools();
const result = await client.callTool({ name: 'get_server_info', arguments: {} });
if (result.isError) throw new Error(`get_server_info: ${JSON.stringify(result.content)}`);
console.log(JSON.stringify({ tools: tools.map((t) => t.name), info: result.structuredContent }));
await client.close();
