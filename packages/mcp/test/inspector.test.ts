/**
 * The official MCP Inspector's CLI (a client of its own, on the v2 SDK)
 * against the real server over stdio, as a developer or a CI job runs it:
 * `mcp-inspector --cli <server command> --method …`. Everything is local: the
 * Inspector spawns the server and talks to it on pipes.
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { TOOLS } from '@ctxfs/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_ARGS, Output, serverEnv } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

/** The Inspector's `mcp-inspector` bin, as its package declares it. */
function inspectorBin(): string {
  const manifest = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json');
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  const entry = bin['mcp-inspector'];
  if (entry === undefined) throw new Error(`${manifest} declares no mcp-inspector bin`);
  return join(dirname(manifest), entry);
}

let ws: TempWorkspace;
let home: string;

/** Runs `mcp-inspector --cli --format json <server> <args>` and returns its exit code and output. */
async function inspector(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // HOME is a fresh directory: whatever the Inspector keeps (catalog, secrets) stays out of the user's.
  const child = spawn(process.execPath, [inspectorBin(), '--cli', '--format', 'json', process.execPath, ...NODE_ARGS, '--root', ws.root, ...args], {
    env: serverEnv({ HOME: home }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout = new Output();
  const stderr = new Output();
  child.stdout.on('data', (c: Buffer) => stdout.append(c));
  child.stderr.on('data', (c: Buffer) => stderr.append(c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout: stdout.text, stderr: stderr.text };
}

// Each run is a process pair of its own, reading the same files: they can run at once.
describe.concurrent('the MCP Inspector CLI', () => {
  beforeAll(() => {
    ws = tempWorkspace();
    home = mkdtempSync(join(tmpdir(), 'ctxfs-mcp-inspector-home-'));
  });
  afterAll(() => {
    ws?.remove();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  it('lists all the tools, with schemas it finds portable', async () => {
    // --strict exits 6 on an error-severity schema portability problem.
    const r = await inspector(['--method', 'tools/list', '--strict']);
    expect(r.code, r.stderr).toBe(0);
    const { result } = JSON.parse(r.stdout) as { result: { tools: Array<{ name: string; inputSchema: unknown; outputSchema: unknown }> } };
    expect(result.tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
    expect(result.tools).toHaveLength(TOOLS.length);
    for (const t of result.tools) expect(t.outputSchema).toBeDefined();
    expect(r.stderr).toContain('0 errors');
  });

  it('calls read_lines and gets the numbered lines', async () => {
    const r = await inspector(['--method', 'tools/call', '--tool-name', 'read_lines', '--tool-arg', 'path=src/auth.ts', '--tool-arg', 'start_line=1']);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const { result } = JSON.parse(r.stdout) as {
      result: { content: Array<{ type: string; text: string }>; structuredContent: Record<string, unknown>; isError?: boolean };
    };
    expect(result.isError ?? false).toBe(false);
    const text = result.content[0]?.text ?? '';
    expect(text).toContain('1\timport { retries } from');
    expect(text).toContain('4\texport class AuthManager {');
    expect(result.structuredContent).toMatchObject({ path: 'src/auth.ts', view: 'lines', start_line: 1, total_lines: 16 });
  });

  it('reports a refused call as the tool error it is', async () => {
    const r = await inspector(['--method', 'tools/call', '--tool-name', 'read_lines', '--tool-arg', 'path=../outside.ts', '--tool-arg', 'start_line=1']);
    // The Inspector prints the result and exits non-zero for one with isError.
    expect(r.code).not.toBe(0);
    const { result } = JSON.parse(r.stdout) as { result: { content: Array<{ text: string }>; isError: boolean } };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^EPATHESCAPE: /);
  });
});
