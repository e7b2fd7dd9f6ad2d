// What a Berth project tells a TypeScript SDK client by itself: log
// records at the level the client set, and tools/list_changed after an
// edit of the project's config. Driven by TestTypeScriptSDKHearsLogsAndToolChanges.
// Usage: node notify.mjs <project-root> [http|stdio]
// It prints "ready" once at debug level, then "changed <tools>" after
// tools/list_changed, then, after a warning record saying an edit was not
// applied, one JSON line of everything it heard; then a second client,
// connected after that edit, prints "late <json>": the warnings it heard
// once it set its level, and get_server_info's missing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [root, transport = 'http'] = process.argv.slice(2);

function open() {
  if (transport === 'stdio') {
    return new StdioClientTransport({ command: 'berth-shim', args: ['--project', root], env: process.env });
  }
  const state = JSON.parse(readFileSync(join(root, '.praxis-os', '.mcp_server_state.json'), 'utf8'));
  return new StreamableHTTPClientTransport(new URL(state.url), { requestInit: { headers: state.headers ?? {} } });
}

const logs = [];
let changes = 0;
const waiters = [];
function settle() {
  for (const w of waiters.splice(0)) w();
}
// until resolves once cond() holds, or fails after 30 s.
function until(what, cond) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within 30s; logs: ${JSON.stringify(logs)}`)), 30000);
    const check = () => (cond() ? (clearTimeout(timer), resolve()) : waiters.push(check));
    check();
  });
}

const client = new Client({ name: 'berth-notify', version: '1.0.0' });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); settle(); });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changes++; settle(); });
await client.connect(open());
const before = (await client.listTools()).tools.map((t) => t.name);
await client.setLoggingLevel('debug');
console.log('ready');

await until('tools/list_changed', () => changes > 0);
const after = (await client.listTools()).tools.map((t) => t.name);
console.log('changed ' + JSON.stringify(after));

// The test now writes a config that does not load.
const refused = (l) => l.level === 'warning' && String(l.data?.message).includes('not applied');
await until('a warning that the edit was not applied', () => logs.some(refused));
const still = (await client.listTools()).tools.map((t) => t.name);
console.log(JSON.stringify({ before, after, still, changes, logs }));

// A session that comes after the edit (while the first holds the project)
// hears of it when it sets its level.
const late = new Client({ name: 'berth-notify-late', version: '1.0.0' });
const heard = [];
late.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { heard.push(n.params); logs.push(n.params); settle(); });
await late.connect(open());
await late.setLoggingLevel('warning');
await until('the late session hearing the edit was not applied', () => heard.some(refused));
const info = await late.callTool({ name: 'get_server_info', arguments: {} });
console.log('late ' + JSON.stringify({ heard, missing: info.structuredContent?.missing ?? [] }));
await late.close();
await client.close();
