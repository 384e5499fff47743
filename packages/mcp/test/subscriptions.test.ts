/**
 * A subscriber is told once per change. A change made through ctxfs is
 * reported by the tool call that made it and seen by the file's watch too;
 * whichever comes first tells, the other must not tell again. On a loaded
 * machine the watch can come first: the edit still records its version and
 * audit line after the file is on disk.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpWorkspace } from '../src/index.ts';

const base = mkdtempSync(join(tmpdir(), 'ctxfs-mcp-subscriptions-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Waits until `told` holds `n` entries, or `ms` passed. */
async function settle(told: readonly string[], n: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (told.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

describe('subscriptions', () => {
  it('a change the watch has told is not told again when the call that made it reports it', { timeout: 30_000 }, async () => {
    const root = join(base, 'root');
    mkdirSync(root);
    writeFileSync(join(root, 'notes.md'), 'v0\n');
    const workspace = McpWorkspace.open({ backend: { kind: 'host', root }, store: join(base, 'state.db'), policyFiles: false, startDelayMs: 0 });
    try {
      await workspace.ready();
      const uri = 'ctxfs://files/notes.md';
      const told: string[] = [];
      workspace.subscribe(uri, (u) => told.push(u));
      // The watch starts with the subscription: give it the moment it takes to be ready.
      await new Promise((r) => setTimeout(r, 500));
      writeFileSync(join(root, 'notes.md'), 'v1\n');
      await settle(told, 1, 10_000);
      expect(told).toEqual([uri]);
      // The call that wrote v1 reports it after the watch did.
      workspace.notifyChanged(uri);
      await settle(told, 2, 500);
      expect(told).toEqual([uri]);
      // A new content is told, whoever sees it first.
      writeFileSync(join(root, 'notes.md'), 'v2\n');
      workspace.notifyChanged(uri);
      await settle(told, 3, 1_000);
      expect(told).toEqual([uri, uri]);
    } finally {
      await workspace.close();
    }
  });
});
