/**
 * Progress and cancellation while the workspace is scanned. The server
 * answers at once and scans in the background; a call that needs the scan
 * waits for it, reporting progress to a client that asked for it (a progress
 * token), and a client may cancel a call while it waits. The workspace is a
 * container holding 4,000 real files: the test's first call goes out as soon
 * as the session is up, when the scan has hardly begun (a few hundred files
 * in, on this machine), and the scan of the rest through the engine outlasts
 * everything the test does while it waits.
 *
 * @module
 */

import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableBackends, type BackendWorkspace, backendWorkspace, removeBackendContainers } from './support/backends.ts';
import { PostOnlyClient } from './support/post-only.ts';
import { type Connected, call, connectStdio, startHttp, type TransportKind } from './support/server.ts';
import { realFiles } from './support/workspace.ts';

const backends = await availableBackends();
afterAll(removeBackendContainers);

/** Long enough for any scan here; the default (60 s) is too, but a slow CI machine should fail on an assertion, not a timeout. */
const WAIT = { timeout: 120_000 };

let seeded: Promise<BackendWorkspace> | undefined;
/**
 * The workspace, seeded once: each server scans it afresh all the same (a
 * container workspace's state is in the server's memory), and the container
 * goes with all of it at the end.
 */
function vendored(): Promise<BackendWorkspace> {
  seeded ??= backendWorkspace('container', { 'README.md': '# Vendored packages\n', ...realFiles(4000) });
  return seeded;
}

describe.runIf(backends.includes('container')).each(['stdio', 'http'] as const)('over %s, while the first scan runs', (transport: TransportKind) => {
  let c: Connected;

  beforeAll(async () => {
    const ws = await vendored();
    if (transport === 'stdio') {
      // No tools/list first: the call below goes out as soon as the session is up, while the scan has just begun.
      c = await connectStdio(ws.args, { listTools: false });
    } else {
      const server = await startHttp(ws.args);
      c = { ...(await server.connect()), close: () => server.stop() };
    }
  });
  afterAll(async () => {
    await c?.close();
  });

  it('reports the scan to a waiting call, ends a cancelled one, and keeps serving', async () => {
    const progress: Progress[] = [];
    const giveUp = new AbortController();
    const waiting = c.client.callTool({ name: 'grep', arguments: { pattern: 'Vendored', path: 'README.md' } }, undefined, {
      ...WAIT,
      onprogress: (p) => {
        progress.push(p);
        // The first report proves the scan is under way: the other call, waiting for the same scan, is given up now.
        if (progress.length === 1) giveUp.abort(new Error('the user moved on'));
      },
    });
    const cancelled = c.client.callTool({ name: 'list_files', arguments: {} }, undefined, { ...WAIT, signal: giveUp.signal });

    await expect(cancelled).rejects.toThrow('the user moved on');
    const done = await waiting;
    expect(done.isError ?? false).toBe(false);
    expect(JSON.stringify(done.content)).toContain('# Vendored packages');

    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]?.message).toMatch(/^scanning the workspace: (walk|hash), \d+ files$/);
    // MCP: "the progress value MUST increase with each notification"; a total, once known, bounds it.
    for (const [i, p] of progress.entries()) {
      if (i > 0) expect(p.progress, JSON.stringify(progress.slice(i - 1, i + 1))).toBeGreaterThan(progress[i - 1]?.progress ?? 0);
      if (p.total !== undefined) expect(p.progress).toBeLessThanOrEqual(p.total);
    }
    // The server kept serving the session whose call was cancelled.
    const after = await call(c.client, 'list_files', { path: 'vendor', depth: 1 });
    expect(after.isError, after.text).toBe(false);
    expect(after.data?.total as number).toBeGreaterThan(0);
  });
});

describe.runIf(backends.includes('container'))('over HTTP, to a client that only POSTs', () => {
  let server: Awaited<ReturnType<typeof startHttp>>;

  beforeAll(async () => {
    const ws = await vendored();
    server = await startHttp(ws.args);
  });
  afterAll(async () => {
    await server?.stop();
  });

  // A client need not open the GET stream (MCP: it MAY); what belongs to a
  // call must come on that call's own response stream.
  it("sends a call's progress on the call's own response stream", async () => {
    const client = await PostOnlyClient.open(server.url, {});
    const messages = await client.call(2, 'tools/call', {
      name: 'grep',
      arguments: { pattern: 'Vendored', path: 'README.md' },
      _meta: { progressToken: 'scan' },
    });
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatchObject({ params: { progressToken: 'scan' } });
    expect(messages.at(-1)).toMatchObject({ id: 2, result: { isError: false } });
  });
});
