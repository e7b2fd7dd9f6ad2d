// A hosted server-everything through a Berth project's streamable HTTP
// port, with the TypeScript SDK: argument completion of a hosted prompt
// (with context), a resource subscription and its updates, and the
// server's log messages at the level the client set. The client ends
// with close(), which sends no DELETE.
// Driven by TestTypeScriptSDKCompletesSubscribesAndHearsHostedLogs.
// Usage: node hostedextras.mjs <url>
// It prints one JSON line.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [url] = process.argv.slice(2);
const client = new Client({ name: 'berth-hosted-extras', version: '1.0.0' });
const logs = [];
const updates = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const capabilities = client.getServerCapabilities();
await client.setLoggingLevel('debug');
const prompt = { type: 'ref/prompt', name: 'everything__completable-prompt' };
const department = await client.complete({ ref: prompt, argument: { name: 'department', value: 'En' } });
const name = await client.complete({ ref: prompt, argument: { name: 'name', value: '' }, context: { arguments: { department: 'Engineering' } } });

const uri = 'demo://resource/dynamic/text/7';
await client.subscribeResource({ uri });
await client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
await client.callTool({ name: 'everything__toggle-simulated-logging', arguments: {} });
const deadline = Date.now() + 30000;
while (Date.now() < deadline && !(updates.includes(uri) && logs.some((l) => l.logger === 'everything'))) {
  await new Promise((r) => setTimeout(r, 50));
}
await client.callTool({ name: 'everything__toggle-simulated-logging', arguments: {} });
await client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
console.log(JSON.stringify({
  completions: capabilities?.completions !== undefined,
  department: department.completion.values,
  names: name.completion.values,
  updated: updates.includes(uri),
  logger: logs.find((l) => l.logger === 'everything')?.logger ?? '',
  logData: String(logs.find((l) => l.logger === 'everything')?.data ?? ''),
}));
await client.close();
