import { spawn } from 'node:child_process';
import { TOOLS } from '@ctxfs/tools';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { BIN, useProject } from './support/cli.ts';

// ctxfs serve, driven by the MCP SDK's own client as an MCP host would drive it.
describe('ctxfs serve', () => {
  const project = useProject();

  it('serves every tool over stdio and ends when the client hangs up', { timeout: 60_000 }, async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--profile', 'small', 'serve'],
      cwd: project.root,
      env: project.env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const read = await client.callTool({ name: 'read_lines', arguments: { path: 'src/math.ts', start_line: 2, end_line: 2 } });
    expect(read.isError).toBeFalsy();
    expect(JSON.stringify(read.content)).toContain('export function add');
    const pid = transport.pid;
    expect(pid).not.toBeNull();
    await client.close();
    // The server goes away with its client: signal 0 finds no process once it has.
    await expect
      .poll(
        () => {
          try {
            process.kill(pid as number, 0);
            return 'running';
          } catch {
            return 'gone';
          }
        },
        { timeout: 20_000 },
      )
      .toBe('gone');
  });

  it('over HTTP, asks for its token and serves whoever gives it', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--http', '--port', '0', '--token', 'sesame', '--json'], { cwd: project.root, env: project.env });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('}\n')) resolve((JSON.parse(out) as { url: string }).url);
        });
        child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
      });
      const refused = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{}',
      });
      expect(refused.status).toBe(401);
      const client = new Client({ name: 'cli-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer sesame' } } }));
      const grep = await client.callTool({ name: 'grep', arguments: { pattern: 'retries' } });
      expect(JSON.stringify(grep.content)).toContain('src/math.ts');
      await client.close();
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    }
  });
});
