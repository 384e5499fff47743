/**
 * What the server does before a client's first call. Loading the context
 * layer and scanning hold the event loop, so they wait until the client has
 * had its first answers: initialize and the tool list are answered by a
 * server that has loaded nothing, and the tool list starts the load, so the
 * first call finds it under way. The official SDK's client, in memory.
 *
 * @module
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createConnection, McpWorkspace } from '../src/index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function connected(startDelayMs: number) {
  const base = mkdtempSync(join(tmpdir(), 'ctxfs-mcp-startup-'));
  dirs.push(base);
  const root = join(base, 'root');
  mkdirSync(root);
  writeFileSync(join(root, 'a.txt'), 'alpha\n');
  const store = join(base, 'state.db');
  const workspace = McpWorkspace.open({ backend: { kind: 'host', root }, store, policyFiles: false, startDelayMs });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createConnection(workspace);
  await server.connect(serverSide);
  const client = new Client({ name: 'startup-test', version: '0.0.0' });
  await client.connect(clientSide);
  return {
    workspace,
    client,
    store,
    close: async () => {
      await client.close();
      await workspace.close();
    },
  };
}

describe('start-up', () => {
  it('loads nothing before the tool list: initialize is answered and the store is not yet opened', async () => {
    const c = await connected(60_000);
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(existsSync(c.store)).toBe(false);
      expect(c.workspace.context).toBeUndefined();
      // The tool list is answered from the committed list, then the load begins: no call is needed to start it.
      expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
      const ctx = await c.workspace.ready({ start: false });
      expect(ctx.registry.get('a.txt')).toBeDefined();
      expect(existsSync(c.store)).toBe(true);
    } finally {
      await c.close();
    }
  });

  it('loads after startDelayMs with no client message at all', async () => {
    const c = await connected(200);
    try {
      const ctx = await c.workspace.ready({ start: false });
      expect(ctx.registry.get('a.txt')).toBeDefined();
    } finally {
      await c.close();
    }
  });

  it('a first call without a tool list starts the load itself', async () => {
    const c = await connected(60_000);
    try {
      const result = await c.client.callTool({ name: 'read_lines', arguments: { path: 'a.txt', start_line: 1, end_line: 1 } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain('alpha');
    } finally {
      await c.close();
    }
  });
});
