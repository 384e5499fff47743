/**
 * The host's fast paths for bulk metadata and hashing: `walk` with stats
 * through GNU find, and `digest` in worker threads. Each is held to the
 * slow path it replaces (recursive `list`, a read per file) on trees with
 * what the conformance fixtures cannot make: symlinks in and out of the
 * root, FIFOs, temp files of the atomic writer, names that are not UTF-8.
 */

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import nodeFs from 'node:fs';
import path from 'node:path';
import type { FileDigest, FileEntry, Filesystem } from '@ctxfs/core';
import { walkTree } from '@ctxfs/core';
import { HostFilesystem, type HostFilesystemOptions } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { findGnuFind } from '../src/find-walk.ts';
import { seed, tempWorkspace } from './helpers.ts';

const spaces: Array<{ remove(): void }> = [];
const open: HostFilesystem[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const w of spaces.splice(0)) w.remove();
});

async function workspace(options: Partial<HostFilesystemOptions> = {}) {
  const ws = tempWorkspace();
  spaces.push(ws);
  const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state, ...options });
  open.push(hfs);
  return { ws, hfs, abs: (p: string) => path.join(ws.root, p) };
}

/** A tree with every kind of entry the host can meet, and a secret outside it. */
function hostileTree(root: string, outside: string): void {
  seed(root, { 'a.txt': 'a', 'dir/b.txt': 'bb', 'dir/deep/c.txt': 'ccc', '.hidden/d.txt': 'd', 'node_modules/m/index.js': 'm' }, ['empty']);
  nodeFs.mkdirSync(outside, { recursive: true });
  nodeFs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret');
  nodeFs.symlinkSync('a.txt', path.join(root, 'link-inside'));
  nodeFs.symlinkSync('dir', path.join(root, 'link-dir'));
  nodeFs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link-outside'));
  nodeFs.symlinkSync(outside, path.join(root, 'dir', 'link-outside-dir'));
  nodeFs.symlinkSync('missing-target', path.join(root, 'link-broken'));
  execFileSync('mkfifo', [path.join(root, 'dir', 'fifo')]);
  nodeFs.writeFileSync(path.join(root, 'dir', '.ctxfs-tmp-0123456789abcdef-x'), 'in-flight temp file');
  nodeFs.writeFileSync(Buffer.concat([Buffer.from(`${root}/dir/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'not utf-8 name');
}

function describeEntry(e: FileEntry): string {
  const s = e.stat;
  return `${e.path} ${e.kind} ${s ? `${s.kind} ${s.size} ${s.mtime.getTime()} ${s.mode}` : '-'}`;
}

/** The slow path: `list(dir, { stat })` directory by directory. */
async function listWalk(fs: Filesystem, options: { exclude?: string[]; enter?: (e: FileEntry) => boolean } = {}): Promise<string[]> {
  const out: string[] = [];
  const exclude = new Set(options.exclude ?? []);
  const read = async (p: string) => (await fs.list(p, { stat: true })).filter((e) => !exclude.has(e.name));
  for await (const { entry } of walkTree(read, '', { enter: options.enter })) out.push(describeEntry(entry));
  return out.sort();
}

async function fastWalk(fs: Filesystem, options: { exclude?: string[]; enter?: (e: FileEntry) => boolean } = {}): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of fs.walk('', { stat: true, ...options })) for (const e of batch) out.push(describeEntry(e));
  return out.sort();
}

describe('walk with stats through GNU find', () => {
  it('GNU find is on this machine, so the native path is what these tests exercise', () => {
    expect(findGnuFind()).toMatch(/find$/);
  });

  it('yields exactly what list(dir, { stat: true }) does, on a tree of symlinks, FIFOs, temp files and bad names', async () => {
    const { ws, hfs } = await workspace();
    hostileTree(ws.root, path.join(ws.base, 'outside'));
    const fast = await fastWalk(hfs);
    expect(fast).toEqual(await listWalk(hfs));
    const joined = fast.join('\n');
    // Symlinks inside are reported with their target's stat; nothing outside leaks.
    expect(joined).toContain('link-inside symlink file 1');
    expect(joined).toContain('link-dir symlink directory 0');
    expect(joined).not.toContain('outside secret');
    expect(joined).not.toMatch(/\.ctxfs-tmp-|bad-/);
    expect(joined).toContain('dir/fifo other other');
  });

  it('exclude and enter prune natively and in JavaScript alike', async () => {
    const { ws, hfs } = await workspace();
    hostileTree(ws.root, path.join(ws.base, 'outside'));
    const enter = (e: FileEntry) => e.path !== 'dir/deep';
    expect(await fastWalk(hfs, { exclude: ['node_modules', '.hidden', 'a.txt'], enter })).toEqual(
      await listWalk(hfs, { exclude: ['node_modules', '.hidden', 'a.txt'], enter }),
    );
    const names = (await fastWalk(hfs, { exclude: ['*', '[ab]'] })).length;
    expect(names).toBe((await listWalk(hfs)).length); // names, not patterns
  });

  it('mtimes agree with stat() to the millisecond, rounding as node:fs does', async () => {
    const { ws, hfs } = await workspace();
    seed(ws.root, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}.txt`, String(i)])));
    // Sub-millisecond times on both sides of .5 ms.
    for (let i = 0; i < 50; i++)
      nodeFs.utimesSync(path.join(ws.root, `f${i}.txt`), 1_700_000_000 + i / 1000 + 0.0004 + (i % 2) * 0.0002, 1_700_000_000.123456 + i);
    // Before 1970 (find prints the seconds rounded down, then the fraction), at
    // the epoch, whole seconds, past 2038. touch, because node:fs turns a
    // negative time into now.
    const odd = {
      'neg.txt': '-86400.2506',
      'neg-small.txt': '-0.75',
      'neg-whole.txt': '-3',
      'epoch.txt': '0',
      'whole.txt': '1600000000',
      'late.txt': '4102444800.9995',
    };
    for (const [name, time] of Object.entries(odd)) {
      nodeFs.writeFileSync(path.join(ws.root, name), name);
      execFileSync('touch', ['-d', `@${time}`, path.join(ws.root, name)]);
    }
    let seen = 0;
    for await (const batch of hfs.walk('', { stat: true })) {
      for (const e of batch) {
        expect([e.path, e.stat?.mtime.getTime()]).toEqual([e.path, (await hfs.stat(e.path)).mtime.getTime()]);
        seen++;
      }
    }
    expect(seen).toBe(56);
    expect((await hfs.stat('neg.txt')).mtime.getTime()).toBe(-86_400_251);
  });

  it('a start directory that is a symlink to outside is refused, not walked', async () => {
    const { ws, hfs } = await workspace();
    hostileTree(ws.root, path.join(ws.base, 'outside'));
    const walk = async () => {
      for await (const _ of hfs.walk('dir/link-outside-dir', { stat: true })) {
        // draining
      }
    };
    await expect(walk()).rejects.toMatchObject({ code: 'EPATHESCAPE', op: 'walk' });
  });

  it('stopping early kills find and leaves the filesystem usable', async () => {
    const { ws, hfs } = await workspace();
    seed(ws.root, Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`d${i % 30}/f${i}.txt`, 'x'])));
    for await (const batch of hfs.walk('', { stat: true })) {
      expect(batch.length).toBeGreaterThan(0);
      break;
    }
    expect((await fastWalk(hfs)).length).toBe(3030);
  });
});

const sha = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex');

async function digestAll(fs: Filesystem, paths: readonly string[]): Promise<FileDigest[]> {
  const out: FileDigest[] = [];
  for await (const batch of fs.digest(paths, { headBytes: 24 })) out.push(...batch);
  return out;
}

describe('digest in worker threads', () => {
  for (const [label, count] of [
    ['on the calling thread (few files)', 10],
    ['in workers (many files)', 400],
  ] as const) {
    it(`${label}: symlinks inside hash their target, outside and special files are refused`, async () => {
      const { ws, hfs } = await workspace();
      hostileTree(ws.root, path.join(ws.base, 'outside'));
      const files = Array.from({ length: count }, (_, i) => `many/f${i}.txt`);
      seed(ws.root, Object.fromEntries(files.map((f) => [f, `content of ${f}`])));
      const special = ['link-inside', 'link-outside', 'link-broken', 'dir/fifo', 'dir', 'link-dir/b.txt', 'dir/link-outside-dir/secret.txt'];
      const out = await digestAll(hfs, [...special, ...files]);
      const codes = out.slice(0, special.length).map((d) => (d.error ? d.error.code : d.sha256));
      expect(codes).toEqual([sha('a'), 'EPATHESCAPE', 'ENOENT', 'EINVAL', 'EISDIR', sha('bb'), 'EPATHESCAPE']);
      out.slice(special.length).forEach((d, i) => {
        expect(d.path).toBe(files[i]);
        expect(d.error === undefined && d.sha256).toBe(sha(`content of ${files[i]}`));
        // Heads from a worker share one buffer per request; each must still be its own file's.
        expect(Buffer.from(d.error === undefined ? (d.head ?? []) : []).toString()).toBe(`content of ${files[i]}`.slice(0, 24));
      });
      expect(out[0]?.error === undefined && Buffer.from(out[0]?.head ?? []).toString()).toBe('a');
      for (const d of out) if (d.error) expect(d.error.hint.length).toBeGreaterThan(0);
    });
  }

  it('with symlinks refused, a link is refused in workers as on the main thread', async () => {
    const { ws, hfs } = await workspace({ symlinks: 'refuse' });
    seed(ws.root, Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}.txt`, 'x'])));
    nodeFs.symlinkSync('f1.txt', path.join(ws.root, 'link'));
    const paths = [...Array.from({ length: 100 }, (_, i) => `f${i}.txt`), 'link'];
    const out = await digestAll(hfs, paths);
    expect(out.at(-1)?.error?.code).toBe('EPATHESCAPE');
    expect(out.filter((d) => d.error).length).toBe(1);
  });

  it('digestWorkers: 0 hashes on the calling thread with the same results; a bad count is EINVAL', async () => {
    const { ws, hfs } = await workspace({ digestWorkers: 0 });
    const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}.bin`, Buffer.alloc(i * 37, i)]));
    seed(ws.root, files);
    const out = await digestAll(hfs, Object.keys(files));
    for (const d of out) expect(!d.error && d.sha256).toBe(sha(files[d.path] as Buffer));
    expect(() => new HostFilesystem({ root: ws.root, stateDir: ws.state, digestWorkers: -1 })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });

  it('close stops the workers; a digest after close is ECLOSED', async () => {
    const { ws, hfs } = await workspace();
    seed(ws.root, Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}.txt`, 'x'])));
    const paths = Array.from({ length: 100 }, (_, i) => `f${i}.txt`);
    expect((await digestAll(hfs, paths)).length).toBe(100);
    await hfs.close();
    await expect(digestAll(hfs, paths)).rejects.toMatchObject({ code: 'ECLOSED' });
  });
});
