/**
 * A trail someone edited by hand, so that a line changed its length (and
 * every line after it moved): the workspace still opens — the verifier has
 * to be able to run and name the line — but never silently: a process
 * warning names the line, a query through the index refuses with it, and the
 * records read from the log itself show the edited one as not verifying.
 */

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { type AuditRemedies, AuditTrail, createContext, openStateStore } from '../src/index.ts';

let base: string;
afterEach(() => rmSync(base, { recursive: true, force: true }));

interface Opened {
  readonly trail: AuditTrail;
  /** A read of a.txt, its record written. */
  read(): Promise<void>;
  close(): Promise<void>;
}

/** A workspace whose trail holds three reads; returns how to open it again. */
async function workspaceWithTrail(remedies?: AuditRemedies): Promise<{ open: () => Promise<Opened>; log: string }> {
  base = mkdtempSync(join(tmpdir(), 'ctxfs-audit-changed-'));
  const root = join(base, 'ws');
  const dir = join(base, 'audit');
  const keyFile = join(base, 'state', 'audit.key');
  const statePath = join(base, 'state.db');
  mkdirSync(root);
  writeFileSync(join(root, 'a.txt'), 'a1\na2\n');
  const open = async () => {
    const fs = await HostFilesystem.open({ root });
    const store = await openStateStore(statePath);
    const trail = AuditTrail.open({ dir, key: { keyFile }, index: store, remedies });
    const ctx = await createContext({ fs, store, agent: 'cli', safety: { policyFiles: false, auditTrail: trail } });
    return {
      trail,
      read: async () => {
        await ctx.readFile('a.txt');
        await ctx.store.flushAudit();
      },
      close: async () => {
        await ctx.close();
        trail.close();
        await store.close();
        await fs.close();
      },
    };
  };
  const w = await open();
  for (let i = 0; i < 3; i++) await w.read();
  await w.close();
  const [file] = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  return { open, log: join(dir, file as string) };
}

/** Edits the agent of line `line` of the log by hand. */
function editLine(log: string, line: number, agent: string): void {
  const lines = readFileSync(log, 'utf8').split('\n');
  lines[line - 1] = (lines[line - 1] as string).replace('"agent":"cli"', `"agent":"${agent}"`);
  writeFileSync(log, lines.join('\n'));
}

/** The process warnings emitted while `body` runs. */
async function warningsOf<T>(body: () => Promise<T>): Promise<{ value: T; warnings: Array<Error & { code?: string }> }> {
  const warnings: Array<Error & { code?: string }> = [];
  const listen = (w: Error & { code?: string }) => warnings.push(w);
  process.on('warning', listen);
  try {
    const value = await body();
    await new Promise((resolve) => setImmediate(resolve));
    return { value, warnings };
  } finally {
    process.off('warning', listen);
  }
}

describe('a trail edited by hand', () => {
  it.each([
    ['to another length (every line after it moved)', 'llm:evil'],
    ['to the same length', 'xyz'],
  ])('edited %s: the workspace opens with a warning naming the line, verify names it, and new records are still appended', async (_how, agent) => {
    const { open, log } = await workspaceWithTrail();
    editLine(log, 3, agent);
    const { value: w, warnings } = await warningsOf(open);
    try {
      const damaged = warnings.filter((x) => x.code === 'CTXFS_AUDIT_DAMAGED');
      expect(damaged).toHaveLength(1);
      expect(damaged[0]?.message).toMatch(/the audit trail was changed: audit-000001\.jsonl line 3 \(seq 3\)/);
      expect(w.trail.verify().firstBad).toMatchObject({ file: 'audit-000001.jsonl', line: 3, seq: 3, damage: 'edited' });
      // Read from the log itself, the edited record is there, marked.
      expect(w.trail.scan({ limit: 10 }).find((r) => r.seq === 3)).toMatchObject({ agent, verified: false });
      await w.read();
      expect(readFileSync(log, 'utf8').trimEnd().split('\n').length).toBeGreaterThan(4);
    } finally {
      await w.close();
    }
  });

  it('a query through the index refuses, naming the line and how to see the damage', async () => {
    const { open, log } = await workspaceWithTrail();
    editLine(log, 3, 'llm:evil');
    const { value: w } = await warningsOf(open);
    try {
      expect(() => w.trail.query({ limit: 10 })).toThrow(/the audit trail was changed: audit-000001\.jsonl line 3 \(seq 3\): edited/);
      try {
        w.trail.query({ limit: 10 });
      } catch (err) {
        expect(err).toMatchObject({ code: 'EIO', hint: expect.stringContaining('run AuditTrail.verify() for the report') });
      }
    } finally {
      await w.close();
    }
  });

  it("the warning and the errors name the remedies the trail's opener gave (a command line's own commands)", async () => {
    const { open, log } = await workspaceWithTrail({ verify: '`tool --state S audit verify`', reindex: '`tool --state S audit reindex`' });
    editLine(log, 3, 'llm:evil');
    const { value: w, warnings } = await warningsOf(open);
    try {
      const damaged = warnings.filter((x) => x.code === 'CTXFS_AUDIT_DAMAGED') as Array<Error & { detail?: string }>;
      expect(damaged[0]?.detail).toMatch(/^run `tool --state S audit verify` for the first line that does not verify/);
      let hint: string | undefined;
      try {
        w.trail.query({ limit: 10 });
      } catch (err) {
        hint = (err as { hint?: string }).hint;
      }
      expect(hint).toContain('run `tool --state S audit verify` for the report');
      expect(hint).toContain('`tool --state S audit reindex` makes queries read the log as it is now');
      expect(hint).not.toContain('AuditTrail');
    } finally {
      await w.close();
    }
  });

  it('an intact trail opens without a warning', async () => {
    const { open } = await workspaceWithTrail();
    const { value: w, warnings } = await warningsOf(open);
    await w.close();
    expect(warnings.filter((x) => x.code === 'CTXFS_AUDIT_DAMAGED')).toEqual([]);
  });
});
