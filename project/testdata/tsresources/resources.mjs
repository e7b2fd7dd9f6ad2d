// Berth's standards as resources and workflows as prompts, seen by the
// TypeScript MCP SDK client: list, read, subscribe, an edit announced,
// a new file listed, prompts listed and fetched.
// Usage: node resources.mjs <streamable HTTP url> <standards folder>
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ResourceUpdatedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [url, standards] = process.argv.slice(2);

// waiter resolves with the next value pushed, or fails after 10 s.
function waiter(what) {
  const queue = [];
  let wake = null;
  return {
    push(v) { queue.push(v); if (wake) { wake(); wake = null; } },
    async next() {
      const deadline = Date.now() + 10000;
      while (queue.length === 0) {
        if (Date.now() > deadline) throw new Error(`no ${what} within 10 s`);
        await new Promise((r) => { wake = r; setTimeout(r, 100); });
      }
      return queue.shift();
    },
  };
}

const updated = waiter('notifications/resources/updated');
const listChanged = waiter('notifications/resources/list_changed');
const client = new Client({ name: 'berth-tsresources', version: '1.0.0' });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => listChanged.push(true));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const out = { capabilities: client.getServerCapabilities() };
const { resources } = await client.listResources();
out.resources = resources.map((r) => r.name).sort();
const a = resources.find((r) => r.name.endsWith('/a.md'));
out.firstRead = (await client.readResource({ uri: a.uri })).contents[0].text;

await client.subscribeResource({ uri: a.uri });
try {
  await client.subscribeResource({ uri: 'file:///etc/passwd' });
  out.subscribeError = '';
} catch (e) {
  out.subscribeError = String(e.message);
}

writeFileSync(join(standards, 'a.md'), '# A\n\nEdited by the TypeScript client.\n');
out.updatedURI = await updated.next();
out.wantURI = a.uri;
out.secondRead = (await client.readResource({ uri: a.uri })).contents[0].text;

// A list_changed from before the new file may be queued: list again at
// each notification until the new file shows (each wait is bounded).
writeFileSync(join(standards, 'c.md'), '# Charlie\n\nA new standard.\n');
for (let i = 0; i < 10; i++) {
  await listChanged.next();
  out.listedAfter = (await client.listResources()).resources.map((r) => r.name).sort();
  if (out.listedAfter.some((n) => n.endsWith('/c.md'))) break;
}

const { prompts } = await client.listPrompts();
out.prompts = prompts.map((p) => ({ name: p.name, arguments: p.arguments }));
const got = await client.getPrompt({ name: 'bug_fix_v1', arguments: { target_file: 'src/app.go' } });
out.promptText = got.messages[0].content.text;

console.log(JSON.stringify(out));
await client.close();
