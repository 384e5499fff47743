/**
 * History stored as deltas: every version comes back byte-exact (text, CRLF,
 * empty, binary, versions unlike their neighbour), chains stay bounded,
 * damage is reported instead of returned as content, retention keeps later
 * versions readable, migration 9 converts a store written by schema 7, and a
 * real file's git history replays through the store.
 */

import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryFilesystem } from '@ctxfs/memory';
import { applyDelta as fossilApply, createDelta as fossilCreate } from 'fossil-delta';
import { afterAll, describe, expect, test } from 'vitest';
import { MAX_CHAIN, maxDepth } from '../src/history/blob-store.ts';
import { applyDelta, makeDelta } from '../src/history/delta.ts';
import { createContext, MIGRATIONS, SqliteStateStore, sha256Hex, VersionStore } from '../src/index.ts';
import { gitFileHistory, grammar, type HistoryStep, historySteps, mostEditedFiles } from './support/history-cases.ts';
import { testState } from './support/test-state.ts';

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ctxfs-deltas-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const enc = new TextEncoder();

/** Records `steps` as an editor does: the old content, then the new one, then the version. */
async function record(versions: VersionStore, steps: readonly HistoryStep[]): Promise<void> {
  for (const step of steps) {
    await versions.store.transaction(async () => {
      const prev = (await versions.latest(step.path))?.sha256;
      if (prev !== undefined) await versions.hasBlob(prev);
      const sha = step.bytes === null ? undefined : await versions.putBlob(step.bytes);
      await versions.append({ path: step.path, sha256: sha, size: step.bytes?.byteLength ?? 0, op: 'write', author: 'user' });
    });
  }
}

/** Every version of every path in `steps` reads back as it was recorded, rebuilt from the table. */
async function expectRoundTrip(versions: VersionStore, steps: readonly HistoryStep[]): Promise<void> {
  const seq = new Map<string, number>();
  for (const step of steps) {
    const n = (seq.get(step.path) ?? 0) + 1;
    seq.set(step.path, n);
    const v = await versions.bySeq(step.path, n);
    expect(v?.sha256, `${step.path} #${n}`).toBe(step.bytes === null ? undefined : sha256Hex(step.bytes));
    if (step.bytes === null || v?.sha256 === undefined) continue;
    versions.blobs.clearCache();
    const back = await versions.getBlob(v.sha256);
    expect(back && Buffer.from(back).equals(step.bytes), `${step.path} #${n} byte-exact`).toBe(true);
  }
}

describe('delta codec', () => {
  test("our deltas and the library's agree: each applier reads the other's, for text and binary pairs", () => {
    const wasm = grammar('regex');
    const patched = wasm.slice();
    patched[100] = (patched[100] ?? 0) ^ 0xff;
    patched.set(enc.encode('inserted bytes'), 5000);
    const pairs: Array<[Uint8Array, Uint8Array]> = [
      [enc.encode('a\nb\nc\n'.repeat(500)), enc.encode(`${'a\nb\nc\n'.repeat(250)}X\n${'a\nb\nc\n'.repeat(250)}`)],
      [enc.encode('a\r\nb\r\n'.repeat(300)), enc.encode('a\r\nB\r\n'.repeat(300))],
      [new Uint8Array(0), enc.encode('from nothing\n')],
      [enc.encode('to nothing\n'), new Uint8Array(0)],
      [enc.encode('same\n'), enc.encode('same\n')],
      [enc.encode('head and tail only differ in the middle\n'), enc.encode('head and tail ONLY differ in the middle\n')],
      [enc.encode('x'.repeat(10_000)), enc.encode(`${'x'.repeat(5_000)}y${'x'.repeat(5_000)}`)],
      [wasm, patched],
      [wasm, grammar('ini')],
    ];
    for (const [a, b] of pairs) {
      const theirs = fossilCreate(a, b);
      expect(Buffer.from(applyDelta(a, theirs)).equals(b)).toBe(true);
      const ours = makeDelta(a, b) as Uint8Array;
      expect(Buffer.from(applyDelta(a, ours)).equals(b)).toBe(true);
      // Our checksum field is 0 (versions are checked by SHA-256), so the library applies ours without its check.
      expect(Buffer.from(fossilApply(a, ours, { verifyChecksum: false })).equals(b)).toBe(true);
      expect(ours.byteLength).toBeLessThanOrEqual(theirs.byteLength * 1.5 + 32);
    }
  });

  test('a malformed delta throws instead of producing bytes', () => {
    const a = enc.encode('hello world, hello world\n'.repeat(10));
    const delta = fossilCreate(a, enc.encode('hello world, HELLO world\n'.repeat(10)));
    expect(() => applyDelta(a, delta.subarray(0, delta.length - 3))).toThrow(/delta/);
    expect(() => applyDelta(new Uint8Array(3), delta)).toThrow(/out of range/);
    expect(() => applyDelta(a, enc.encode('zz'))).toThrow(/delta/);
  });
});

describe('version store as deltas', () => {
  test('every version of text, CRLF, empty, deleted, rewritten and binary files reads back byte-exact', async () => {
    const versions = new VersionStore(await SqliteStateStore.open());
    const steps = historySteps();
    await record(versions, steps);
    await expectRoundTrip(versions, steps);
    const encodingOf = async (path: string, n: number) => versions.blobs.encoding((await versions.bySeq(path, n))?.sha256 as string);
    // Small edits are deltas against the version before.
    expect((await encodingOf('src/app.ts', 10))?.base).toBe((await versions.bySeq('src/app.ts', 9))?.sha256);
    expect((await encodingOf('docs/windows.txt', 5))?.codec).toMatch(/^delta/);
    expect((await encodingOf('bin/grammar.wasm', 3))?.codec).toMatch(/^delta/);
    // A version unlike its neighbour, an empty file and a different binary are stored whole.
    expect((await encodingOf('src/app.ts', 41))?.base).toBeUndefined();
    expect(await encodingOf('empty.txt', 1)).toMatchObject({ codec: 'raw', storedBytes: 0 });
    expect((await encodingOf('bin/grammar.wasm', 6))?.base).toBeUndefined();
    const raw = steps.reduce((n, s) => n + (s.bytes?.byteLength ?? 0), 0);
    expect(await versions.storedBytes()).toBeLessThan(raw / 10);
    await versions.store.close();
  });

  test('chains stay within their bound: a snapshot every MAX_CHAIN + 1 versions, sooner for large files', async () => {
    const versions = new VersionStore(await SqliteStateStore.open());
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} of a file edited many times`);
    const shas: string[] = [];
    const texts: string[] = [];
    for (let v = 0; v < 2 * MAX_CHAIN + 10; v++) {
      lines[(v * 31) % lines.length] = `edit ${v}`;
      texts.push(lines.join('\n'));
      const sha = await versions.putBlob(enc.encode(texts[v] as string));
      await versions.append({ path: 'a.txt', sha256: sha, size: 0, op: 'write', author: 'user' });
      shas.push(sha);
    }
    // Each rebuilt from its whole version through the full chain (up to MAX_CHAIN deltas composed).
    for (const [v, sha] of shas.entries()) {
      versions.blobs.clearCache();
      expect(new TextDecoder().decode(await versions.getBlob(sha)), `version ${v}`).toBe(texts[v]);
    }
    const depths = await Promise.all(shas.map(async (s) => (await versions.blobs.encoding(s))?.depth));
    expect(Math.max(...(depths as number[]))).toBe(MAX_CHAIN);
    expect(depths.filter((d) => d === 0)).toHaveLength(3);
    // A 4 MiB file: the rebuild budget allows only a few deltas.
    let x = 7;
    const big = new Uint8Array(4 * 1024 * 1024).map(() => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x & 0xff;
    });
    expect(maxDepth(big.byteLength)).toBe(4);
    for (let v = 0; v < 8; v++) {
      big[v * 1000] = 255 - v;
      const copy = big.slice();
      await versions.append({ path: 'big.bin', sha256: await versions.putBlob(copy), size: copy.byteLength, op: 'write', author: 'user' });
    }
    const bigDepths = await Promise.all((await versions.list('big.bin', 10)).map(async (v) => (await versions.blobs.encoding(v.sha256 as string))?.depth));
    expect(Math.max(...(bigDepths as number[]))).toBe(4);
    versions.blobs.clearCache();
    expect(Buffer.from((await versions.getBlob((await versions.latest('big.bin'))?.sha256 as string)) as Uint8Array).equals(big)).toBe(true);
    await versions.store.close();
  });

  test("long repeated runs (where fossil-delta's encoder is quadratic) still make small deltas", async () => {
    const versions = new VersionStore(await SqliteStateStore.open());
    const zeros = new Uint8Array(4 * 1024 * 1024);
    const a = await versions.putBlob(zeros);
    const edited = zeros.slice();
    edited.set(enc.encode('a few bytes'), 1000);
    const b = await versions.putBlob(edited, undefined, { near: a });
    expect(await versions.blobs.encoding(b)).toMatchObject({ codec: 'delta', depth: 1 });
    // Edits at both ends leave 4 MiB of zeros between them for the block index.
    const ends = zeros.slice();
    ends[0] = 1;
    ends[ends.length - 1] = 1;
    const c = await versions.putBlob(ends, undefined, { near: a });
    expect(await versions.blobs.encoding(c)).toMatchObject({ codec: 'delta', depth: 1 });
    expect((await versions.blobs.encoding(c))?.storedBytes).toBeLessThan(1024);
    // A record repeated a thousand times, one record changed.
    const record = enc.encode('id,name,value,updated\n1,alpha,42,2024-01-01\n'.repeat(2));
    const table = new Uint8Array(record.length * 1000);
    for (let i = 0; i < 1000; i++) table.set(record, i * record.length);
    const t1 = await versions.putBlob(table);
    const changed = table.slice();
    changed.set(enc.encode('99'), 500 * record.length + 35);
    const t2 = await versions.putBlob(changed, undefined, { near: t1 });
    expect((await versions.blobs.encoding(t2))?.codec).toBe('delta');
    versions.blobs.clearCache();
    for (const [sha, bytes] of [
      [b, edited],
      [c, ends],
      [t2, changed],
    ] as const) {
      expect(Buffer.from((await versions.getBlob(sha)) as Uint8Array).equals(bytes)).toBe(true);
    }
    await versions.store.close();
  });

  test('a damaged delta is reported as EIO, never returned as content', async () => {
    const versions = new VersionStore(await SqliteStateStore.open());
    const text = Array.from({ length: 40 }, (_, i) => `line ${i}: one two three four five six\n`).join('');
    const a = await versions.putBlob(enc.encode(text));
    const b = await versions.putBlob(enc.encode(text.replace('10: one two three four', '10: one two three FOUR')), undefined, { near: a });
    expect((await versions.blobs.encoding(b))?.codec).toBe('delta');
    const content = (versions.store as SqliteStateStore).database.db.prepare('SELECT content FROM blobs WHERE sha256 = ?').get(b) as { content: Uint8Array };
    const damaged = Buffer.from(content.content).toString('latin1').replace('FOUR', 'F0UR');
    (versions.store as SqliteStateStore).database.db.prepare('UPDATE blobs SET content = ? WHERE sha256 = ?').run(Buffer.from(damaged, 'latin1'), b);
    versions.blobs.clearCache();
    await expect(versions.getBlob(b)).rejects.toThrow(expect.objectContaining({ code: 'EIO', reason: expect.stringMatching(/hash/) }));
    (versions.store as SqliteStateStore).database.db.prepare('DELETE FROM blobs WHERE sha256 = ?').run(a);
    await expect(versions.getBlob(b)).rejects.toThrow(expect.objectContaining({ code: 'EIO', reason: expect.stringMatching(/missing/) }));
    await versions.store.close();
  });

  test('retention that drops the head of a chain keeps every later version readable', async () => {
    const versions = new VersionStore(await SqliteStateStore.open());
    const steps: HistoryStep[] = [];
    const lines = Array.from({ length: 300 }, (_, i) => `row ${i}`);
    for (let v = 0; v < 30; v++) {
      lines[(v * 7) % 300] = `changed ${v}`;
      steps.push({ path: 'a.txt', bytes: enc.encode(lines.join('\n')) });
    }
    await record(versions, steps);
    expect((await versions.blobs.encoding((await versions.bySeq('a.txt', 2))?.sha256 as string))?.depth).toBe(1);
    const r = await versions.prune({ maxVersionsPerFile: 10 });
    expect(r.versionsRemoved).toBe(20);
    expect(r.blobsRemoved).toBe(20);
    // Only the new head of the chain was stored whole again; the rest are still deltas.
    expect(await versions.blobs.encoding((await versions.bySeq('a.txt', 21))?.sha256 as string)).toMatchObject({ codec: 'zstd', base: undefined });
    expect((await versions.blobs.encoding((await versions.bySeq('a.txt', 22))?.sha256 as string))?.base).toBe((await versions.bySeq('a.txt', 21))?.sha256);
    versions.blobs.clearCache();
    for (let n = 21; n <= 30; n++) {
      const v = await versions.bySeq('a.txt', n);
      expect(Buffer.from((await versions.getBlob(v?.sha256 as string)) as Uint8Array).equals(steps[n - 1]?.bytes as Uint8Array), `#${n}`).toBe(true);
    }
    await versions.store.close();
  });

  test('versions recorded through the editor (writeFile, undo) read back through getVersion', async () => {
    const fs = new MemoryFilesystem({ files: { 'w.txt': 'first\r\nsecond\r\n' } });
    const ctx = await createContext({ fs, store: testState() });
    const texts = ['first\r\nsecond\r\n'];
    for (let i = 0; i < 20; i++) {
      const t = `${texts[texts.length - 1]}line ${i}\r\n`;
      expect((await ctx.writeFile('w.txt', t)).success).toBe(true);
      texts.push(t);
    }
    expect((await ctx.undo('w.txt')).success).toBe(true);
    texts.push(texts[texts.length - 2] as string);
    const history = await ctx.history('w.txt', 100);
    expect(history).toHaveLength(texts.length);
    ctx.versions.blobs.clearCache();
    for (const [i, t] of texts.entries()) expect((await ctx.getVersion('w.txt', i + 1)).text).toBe(t);
    expect((await ctx.versions.blobs.encoding(history[1]?.sha256 as string))?.codec).toMatch(/^delta/);
    await ctx.close();
    await fs.close();
  });
});

describe('migration 9', () => {
  test('converts a store written by schema 7: every version reads back, as deltas, in less space', async () => {
    const path = join(dir, 'v7.db');
    copyFileSync(join(here, 'fixtures', 'history-v7.db'), path);
    const old = await SqliteStateStore.open({ path, migrations: MIGRATIONS.filter((m) => m.version <= 7) });
    expect(await old.schemaVersion()).toBe(7);
    const oldBytes = (old.database.db.prepare('SELECT SUM(LENGTH(content)) AS n FROM blobs').get() as { n: number }).n;
    const codecs = (old.database.db.prepare('SELECT DISTINCT codec FROM blobs ORDER BY codec').all() as Array<{ codec: string }>).map((r) => r.codec);
    expect(codecs).toEqual(['deflate', 'raw']);
    await old.close();

    const store = await SqliteStateStore.open({ path });
    expect(await store.schemaVersion()).toBe(MIGRATIONS.at(-1)?.version);
    const versions = new VersionStore(store);
    await expectRoundTrip(versions, historySteps());
    const after = (store.database.db.prepare('SELECT codec, COUNT(*) AS n FROM blobs GROUP BY codec').all() as Array<{ codec: string; n: number }>).map(
      (r) => r.codec,
    );
    expect(after).not.toContain('deflate');
    expect(after).toContain('delta');
    expect(await versions.storedBytes()).toBeLessThan(oldBytes / 3);
    // The blob remembered from a read, in no version, survives too.
    const served = enc.encode(`${'x'.repeat(4000)} served to a model\n`);
    expect(Buffer.from((await versions.getBlob(sha256Hex(served))) as Uint8Array).equals(served)).toBe(true);
    // New versions append to converted chains.
    await record(versions, [{ path: 'src/app.ts', bytes: enc.encode('after the migration\n') }]);
    expect(await versions.count('src/app.ts')).toBe(44);
    await store.close();
  });
});

describe('real history', () => {
  const repo = join(here, '..', '..', '..');
  test("this repository's most edited files replay through the store byte-exact, as LF and as a Windows checkout (CRLF)", async () => {
    const files = mostEditedFiles(repo, 6);
    const versions = new VersionStore(await SqliteStateStore.open());
    const steps: HistoryStep[] = [];
    for (const f of files) {
      const h = gitFileHistory(repo, f);
      for (const bytes of h) steps.push({ path: f, bytes });
      for (const bytes of h)
        steps.push({ path: `crlf/${f}`, bytes: new Uint8Array(Buffer.from(Buffer.from(bytes).toString('latin1').replaceAll('\n', '\r\n'), 'latin1')) });
    }
    expect(steps.length).toBeGreaterThan(100);
    await record(versions, steps);
    await expectRoundTrip(versions, steps);
    const raw = steps.reduce((n, s) => n + (s.bytes?.byteLength ?? 0), 0);
    expect(await versions.storedBytes()).toBeLessThan(raw / 8);
    await versions.store.close();
  });
});
