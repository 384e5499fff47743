/**
 * The edit journal is write-ahead across a machine's crash, not only a
 * process's: its intent is on stable storage before the file it announces is
 * replaced. SQLite's default here (WAL, `synchronous = NORMAL`) survives a
 * killed process but may lose the last commits to a power loss, which would
 * keep a file's new bytes (the host backend syncs them) and lose the intent
 * and the old content that explain them. A power loss cannot be staged here,
 * so the order is read where it is decided: the system calls of one edit,
 * traced by strace.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..', '..');

// One replace through the context layer on a host directory, its state in an SQLite file beside it.
const EDIT = `
import { HostFilesystem } from ${JSON.stringify(join(REPO, 'packages/host/src/index.ts'))};
import { MemoryFilesystem } from ${JSON.stringify(join(REPO, 'packages/memory/src/index.ts'))};
import { createContext, SqliteStateStore } from ${JSON.stringify(join(REPO, 'packages/context/src/index.ts'))};
const [root, state, durability] = process.argv.slice(2);
const store = await SqliteStateStore.open({ path: state });
const fs = durability === 'memory' ? new MemoryFilesystem({ files: { 'notes.txt': 'status: draft\\n' } }) : await HostFilesystem.open({ root, durability });
const ctx = await createContext({ fs, store });
const session = ctx.session({ agent: 'llm:a' });
await session.readFile('notes.txt');
console.error('ctxfs-test: editing');
const r = await session.replace('notes.txt', 'draft', 'final');
if (!r.success) throw new Error(JSON.stringify(r));
console.error('ctxfs-test: edited');
await ctx.close();
`;

/** The system calls of one replace of notes.txt under `root` (a host directory, or 'memory'), from the edit's start to its end. */
function traceEdit(base: string, root: string, durability: string): string[] {
  const script = join(base, 'edit.mts');
  writeFileSync(script, EDIT);
  const trace = join(base, `trace-${durability}.txt`);
  const r = spawnSync(
    'strace',
    [
      '-f',
      '-y',
      '-e',
      'trace=fsync,fdatasync,rename,renameat,renameat2,write',
      '-o',
      trace,
      process.execPath,
      '--conditions=ctxfs-source',
      script,
      root,
      join(base, `state-${durability}.db`),
      durability,
    ],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  expect(r.error, 'strace is installed by .ci/system-deps.sh').toBeUndefined();
  expect(r.status, r.stderr).toBe(0);
  const lines = readFileSync(trace, 'utf8').split('\n');
  // From the edit on (opening the store and the first read sync for reasons of their own).
  const from = lines.findIndex((l) => l.includes('ctxfs-test: editing'));
  const to = lines.findIndex((l) => l.includes('ctxfs-test: edited'));
  expect(from).toBeGreaterThan(-1);
  expect(to).toBeGreaterThan(from);
  return lines.slice(from, to);
}

const WAL_SYNC = /f(data)?sync\(\d+<[^>]*state-[a-z]+\.db-wal>\)\s+=\s+0/;

describe('the edit journal on SQLite', () => {
  const base = mkdtempSync(join(tmpdir(), 'ctxfs-journal-durability-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it("syncs the intent's WAL frames to disk before the file is renamed into place", () => {
    const root = join(base, 'proj');
    mkdirSync(root);
    writeFileSync(join(root, 'notes.txt'), 'status: draft\n');
    const after = traceEdit(base, root, 'full');
    expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('status: final\n');
    // The host backend renames through its directory's descriptor: rename("/proc/self/fd/N/.ctxfs-tmp-…", "/proc/self/fd/N/notes.txt") = 0.
    const rename = after.findIndex((l) => /rename/.test(l) && /[/"]notes\.txt"\)?\s*=\s*0/.test(l));
    expect(rename, 'the rename of notes.txt into place').toBeGreaterThan(-1);
    const walSync = after.findIndex((l) => WAL_SYNC.test(l));
    expect(walSync, "an fsync of the state's WAL after the edit began").toBeGreaterThan(-1);
    expect(walSync, 'the WAL is synced before the file is renamed').toBeLessThan(rename);
  });

  // A backend that does not flush its files declares it (durableWrites: false): a flushed intent would explain
  // bytes a machine's crash loses anyway, so the journal commits it as any other transaction.
  it.each(['none', 'memory'])('does not sync the WAL for an edit of a backend whose writes are not durable (%s)', (durability) => {
    const root = join(base, `proj-${durability}`);
    mkdirSync(root);
    writeFileSync(join(root, 'notes.txt'), 'status: draft\n');
    const during = traceEdit(base, root, durability);
    if (durability === 'none') {
      expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('status: final\n');
      expect(
        during.some((l) => /rename/.test(l) && /[/"]notes\.txt"\)?\s*=\s*0/.test(l)),
        'the rename of notes.txt into place',
      ).toBe(true);
      expect(
        during.filter((l) => /f(data)?sync\(/.test(l)),
        'no fsync of the file',
      ).toEqual([]);
    }
    expect(during.filter((l) => WAL_SYNC.test(l))).toEqual([]);
  });
});
