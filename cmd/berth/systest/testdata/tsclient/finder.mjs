// A project in finder mode, with the TypeScript SDK: the session asks for
// the finder listing (?tools=finder on the URL, or berth-shim --tools
// finder), finds a hosted tool with find_tools, calls it with call_tool
// with progress, cancels a long call_tool, hears tools/list_changed when a
// called tool is promoted into its listing, and reads the errors of
// schema-invalid arguments and of a server awaiting approval.
// Driven by TestTypeScriptSDKInFinderMode.
// Usage: node finder.mjs <project-root> <project-url>|stdio...
// Each place named gets a client of its own, one after the other in this
// process, and prints one JSON line with what it saw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [root, ...wheres] = process.argv.slice(2);
for (const where of wheres) {
  console.log(JSON.stringify({ where, ...(await finder(where)) }));
}

async function finder(where) {
  const transport = where === 'stdio'
    ? new StdioClientTransport({ command: 'berth-shim', args: ['--project', root, '--tools', 'finder'], env: process.env })
    : new StreamableHTTPClientTransport(new URL(`${where}?tools=finder`));
  const client = new Client({ name: 'berth-finder', version: '1.0.0' });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  await client.connect(transport);

  const out = {};
  const names = async () => (await client.listTools()).tools.map((t) => t.name);
  const text = (res) => res.content?.[0]?.text ?? '';
  const call = (name, args, opts) => client.callTool({ name: 'call_tool', arguments: { name, arguments: args } }, undefined, opts);
  out.before = await names();

  const found = await client.callTool({ name: 'find_tools', arguments: { query: 'run a slow job that reports its progress step by step', n: 5 } });
  out.found = JSON.parse(text(found)).tools.map((t) => ({ name: t.name, schema: t.input_schema }));

  const progress = [];
  const long = await call('everything__trigger-long-running-operation', { duration: 0.3, steps: 3 },
    { onprogress: (p) => progress.push(p.progress) });
  out.progress = progress;
  out.long = text(long);
  out.longError = long.isError ?? false;

  // Promotion: the call above adds the tool to this session's listing.
  for (let i = 0; i < 100 && changed === 0; i++) await new Promise((r) => setTimeout(r, 100));
  out.changed = changed;
  out.after = await names();

  // Cancellation: abort a long call once its first progress arrives.
  const abort = new AbortController();
  const started = Date.now();
  let firstProgress;
  const heard = new Promise((resolve) => { firstProgress = resolve; });
  const cancelled = call('everything__trigger-long-running-operation', { duration: 120, steps: 1200 },
    { signal: abort.signal, onprogress: () => firstProgress(), timeout: 180000 });
  await heard;
  abort.abort('the user changed their mind');
  try {
    await cancelled;
    out.cancelled = 'the cancelled call answered';
  } catch (e) {
    out.cancelled = String(e.message ?? e);
  }
  out.cancelSeconds = (Date.now() - started) / 1000;
  out.echo = text(await call('everything__echo', { message: 'after the cancel' }));

  const echoes = await client.callTool({ name: 'find_tools', arguments: { query: 'echo', n: 5 } });
  out.echoSchema = JSON.parse(text(echoes)).tools.find((t) => t.name === 'everything__echo')?.input_schema;
  const bad = await call('everything__echo', { message: 5 });
  out.bad = { isError: bad.isError ?? false, text: text(bad) };

  try {
    const res = await call('memory__read_graph', {});
    out.unapproved = `answered: ${text(res)}`;
  } catch (e) {
    out.unapproved = String(e.message ?? e);
  }
  await client.close();
  return out;
}
