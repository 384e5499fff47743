import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [
    '--cpu-prof',
    '--cpu-prof-dir=/tmp/prof4',
    'packages/mcp/dist/bin.js',
    '--root',
    '/work/main/packages/context',
    '--store',
    '/tmp/prof4.db',
    '--profile',
    'large',
    '--no-policy-files',
  ],
  stderr: 'inherit',
});
const client = new Client({ name: 'prof', version: '1' });
await client.connect(transport);
await client.callTool({ name: 'list_files', arguments: { path: 'src/safety' } });
let t0 = performance.now();
for (let i = 0; i < 500; i++) await client.callTool({ name: 'list_files', arguments: { path: 'src/safety' } });
console.log('list ms', ((performance.now() - t0) / 500).toFixed(3));
t0 = performance.now();
for (let i = 0; i < 500; i++) await client.callTool({ name: 'read_file', arguments: { path: 'src/safety/delimiters.ts' } });
console.log('read ms', ((performance.now() - t0) / 500).toFixed(3));
await client.close();
