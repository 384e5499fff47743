/**
 * `digest`: SHA-256, size and head of many files in one call, in the order
 * given, with a per-file error instead of a failed call for files that
 * cannot be hashed. Enough files to cross any batching or worker boundary a
 * backend has, and one larger than the shared 1 MiB digest buffer.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import type { FileDigest, Filesystem } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, collect, type SuiteContext, utf8 } from '../context.ts';
import { patternBytes } from './streaming-read.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function digestAll(fs: Filesystem, paths: readonly string[], headBytes?: number): Promise<FileDigest[]> {
  return (await collect(fs.digest(paths, headBytes === undefined ? {} : { headBytes }))).flat();
}

export function digestSection(ctx: SuiteContext): void {
  const timeout = ctx.target.timeout;

  it('hashes each file: sha256 and size match the content, in the order given (duplicates too)', async () => {
    const files = { 'a.txt': 'alpha\n', 'dir/b.bin': patternBytes(5000, 3), 'dir/sub/c.txt': 'γ — unicode\r\n', 'empty.txt': '' };
    const fs = await ctx.make({ files });
    const order = ['dir/sub/c.txt', 'a.txt', 'empty.txt', 'dir/b.bin', 'a.txt'];
    const out = await digestAll(fs, order);
    expect(out.map((d) => d.path)).toEqual(order);
    for (const d of out) {
      const raw = files[d.path as keyof typeof files];
      const bytes = typeof raw === 'string' ? utf8(raw) : raw;
      expect(d.error).toBeUndefined();
      if (d.error) continue;
      expect(d.sha256).toBe(sha256(bytes));
      expect(d.size).toBe(bytes.byteLength);
      expect(d.head).toBeUndefined();
    }
  });

  it('headBytes returns a copy of the first bytes (the whole file when shorter)', async () => {
    const fs = await ctx.make({ files: { 'long.bin': patternBytes(3000, 9), 'short.txt': 'hi' } });
    const [long, short] = await digestAll(fs, ['long.bin', 'short.txt'], 1024);
    expect(long?.error).toBeUndefined();
    expect(long && !long.error && long.head).toEqual(patternBytes(3000, 9).subarray(0, 1024));
    expect(short && !short.error && short.head).toEqual(utf8('hi'));
  });

  it(
    'a file larger than the digest buffer hashes end to end',
    async () => {
      const size = Math.max(3 * 1024 * 1024 + 17, ctx.target.largeFileBytes ?? 0);
      const bytes = patternBytes(size, 5);
      const fs = await ctx.make();
      await fs.writeBytes('big.bin', bytes);
      const [d] = await digestAll(fs, ['big.bin'], 16);
      expect(d && !d.error && { size: d.size, sha256: d.sha256, head: d.head }).toEqual({ size, sha256: sha256(bytes), head: bytes.subarray(0, 16) });
    },
    timeout,
  );

  it(
    'hundreds of files come back complete and in order',
    async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 300; i++) files[`f/${String(i % 7)}/n${String(i).padStart(3, '0')}.txt`] = `file ${i}\n`.repeat(i % 5);
      const fs = await ctx.make({ files });
      const paths = Object.keys(files).reverse();
      const out = await digestAll(fs, paths, 4);
      expect(out.map((d) => d.path)).toEqual(paths);
      for (const d of out) {
        const bytes = utf8(files[d.path] as string);
        expect(d.error === undefined && d.sha256 === sha256(bytes) && d.size === bytes.byteLength).toBe(true);
        if (!d.error) expect(d.head).toEqual(bytes.subarray(0, 4));
      }
    },
    timeout,
  );

  it('a file that cannot be hashed gets an error in its place; the others are hashed', async () => {
    const fs = await ctx.make({ files: { 'ok.txt': 'ok', 'dir/x.txt': 'x' } });
    const paths = ['missing.txt', 'ok.txt', 'dir', 'ok.txt/', '../outside.txt', 'dir/x.txt', 'nul\0name'];
    const out = await digestAll(fs, paths);
    expect(out.map((d) => d.path)).toEqual(paths);
    const codes = out.map((d) => (d.error ? d.error.code : 'OK'));
    expect(codes).toEqual(['ENOENT', 'OK', 'EISDIR', 'ENOTDIR', await codeOf(fs.stat('../outside.txt')), 'OK', await codeOf(fs.stat('nul\0name'))]);
    for (const d of out) {
      if (!d.error) continue;
      expect(d.error.op).toBe('digest');
      expect(d.error.path).toBeTruthy();
      expect(d.error.hint.length).toBeGreaterThan(0);
    }
  });

  it('many missing files among present ones keep their places', async () => {
    const files: Record<string, string> = {};
    const paths: string[] = [];
    for (let i = 0; i < 150; i++) {
      files[`p${i}.txt`] = String(i);
      paths.push(`p${i}.txt`, `gone${i}.txt`);
    }
    const fs = await ctx.make({ files });
    const out = await digestAll(fs, paths);
    expect(out.map((d) => d.path)).toEqual(paths);
    expect(out.map((d) => (d.error ? d.error.code : 'OK'))).toEqual(paths.map((p) => (p.startsWith('p') ? 'OK' : 'ENOENT')));
  });

  it('an empty list yields nothing', async () => {
    const fs = await ctx.make();
    expect(await digestAll(fs, [])).toEqual([]);
  });

  it.each([-1, 1.5, 64 * 1024 + 1, Number.NaN])('headBytes %s is EINVAL for the call', async (headBytes) => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    expect(await codeOf(() => digestAll(fs, ['a.txt'], headBytes))).toBe('EINVAL');
  });

  it('paths that are not an array are EINVAL', async () => {
    const fs = await ctx.make();
    expect(await codeOf(() => digestAll(fs, 'a.txt' as unknown as string[]))).toBe('EINVAL');
  });

  it('works on a read-only filesystem', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'read only' }, readOnly: true });
    const [d] = await digestAll(fs, ['a.txt']);
    expect(d && !d.error && d.sha256).toBe(sha256(utf8('read only')));
  });

  it('after close the call fails with ECLOSED', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    await fs.close();
    expect(await codeOf(() => digestAll(fs, ['a.txt']))).toBe('ECLOSED');
  });

  it('agrees with a read of the same file after an overwrite', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'before' } });
    await fs.write('a.txt', 'after, longer');
    const [d] = await digestAll(fs, ['a.txt']);
    expect(d && !d.error && d.sha256).toBe(sha256(await fs.readBytes('a.txt')));
  });
}
