// A hosted server-everything through a Berth project's streamable HTTP
// port, with the TypeScript SDK: plain calls (answered as one JSON body)
// and a long call whose progress notifications stream before its answer.
// Driven by TestTypeScriptSDKGetsAnswersAndProgressOverHTTP.
// Usage: node progress.mjs <url>
// It prints one JSON line: the echo texts, the progress heard, the answer
// of the long call, the order in which they came and the media type of
// every answer to a POST.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url] = process.argv.slice(2);
const types = [];
const recording = async (input, init) => {
  const res = await fetch(input, init);
  if (init?.method === 'POST' && res.status === 200) types.push(res.headers.get('content-type'));
  return res;
};
const client = new Client({ name: 'berth-progress', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }));

const text = (res) => res.content?.[0]?.text ?? '';
const echoes = [];
for (let i = 0; i < 3; i++) {
  echoes.push(text(await client.callTool({ name: 'everything__echo', arguments: { message: `ping ${i}` } })));
}
const order = [];
const progress = [];
const long = await client.callTool(
  { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
  undefined,
  { onprogress: (p) => { progress.push(p.progress); order.push('progress'); } },
);
order.push('answer');
const after = text(await client.callTool({ name: 'everything__echo', arguments: { message: 'after' } }));
console.log(JSON.stringify({ echoes, progress, long: text(long), longError: long.isError ?? false, order, after, types }));
await client.close();
