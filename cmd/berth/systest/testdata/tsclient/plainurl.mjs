// Reach a Berth project with nothing but the state file's `url`, as a
// sub-agent of the user's own account that ignores `headers` does: no
// header is sent (the broker knows its user's connections). Each
// transport named gets a client of its own, one after the other in this
// process, and a line of JSON.
// Usage: node plainurl.mjs <project-root> http|sse|websocket...
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';

const [root, ...transports] = process.argv.slice(2);
const state = JSON.parse(readFileSync(join(root, '.praxis-os', '.mcp_server_state.json'), 'utf8'));
const url = new URL(state.url);

function open(transport) {
  switch (transport) {
    case 'http':
      return new StreamableHTTPClientTransport(url);
    case 'sse':
      return new SSEClientTransport(new URL('/sse', url));
    case 'websocket':
      globalThis.WebSocket = WebSocket; // Node 20 has none of its own
      return new WebSocketClientTransport(new URL('/ws', url.href.replace(/^http/, 'ws')));
    default:
      throw new Error(`unknown transport ${transport}: use http, sse or websocket`);
  }
}

for (const transport of transports) {
  const client = new Client({ name: 'berth-plainurl', version: '1.0.0' });
  await client.connect(open(transport));
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: 'get_server_info', arguments: {} });
  if (result.isError) throw new Error(`get_server_info over ${transport}: ${JSON.stringify(result.content)}`);
  console.log(JSON.stringify({ transport, tools: tools.map((t) => t.name), info: result.structuredContent }));
  await client.close();
}
