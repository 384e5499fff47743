/**
 * A path a symbolic link takes out of the root is refused in one wording,
 * core's `linkOutsideRoot`, whichever call meets the link: the container
 * backend says the same (packages/container/test/links.test.ts), so a model
 * learns one thing. The host said "the path resolves outside the workspace
 * root (to '/etc/passwd')" for a read (telling where the link leads), "the
 * symbolic link points outside the workspace (to '/etc/passwd')" for a
 * write, "a symbolic link in the path leads out of the workspace" for
 * realpath, and a listing of a link to a file outside was ENOTDIR, which
 * told what lies out there.
 */
import nodeFs from 'node:fs';
import path from 'node:path';
import { type FsError, isFsError, linkOutsideRoot, resolvePath } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { seed, tempWorkspace } from './helpers.ts';

const spaces: Array<{ remove(): void }> = [];
const open: HostFilesystem[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) await f.close();
  for (const w of spaces.splice(0)) w.remove();
});

/** The error `call` rejects with; an answer instead fails the test. */
async function refusal(call: () => Promise<unknown>): Promise<FsError> {
  const err = await call().catch((e: unknown) => e);
  expect(isFsError(err), `expected a refusal, got ${JSON.stringify(err)}`).toBe(true);
  return err as FsError;
}

/** A workspace with links out of the root: to a file, to a directory, to nothing, and a link inside that leads to one of them. */
async function withLinksOut(): Promise<{ hfs: HostFilesystem; outside: string }> {
  const ws = tempWorkspace();
  spaces.push(ws);
  const outside = path.join(ws.base, 'outside');
  nodeFs.mkdirSync(outside);
  nodeFs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
  seed(ws.root, { 'ok.txt': 'ok\n' }, [], {
    out: path.join(outside, 'secret.txt'),
    outdir: outside,
    'out-missing': path.join(outside, 'missing.txt'),
    hop: 'out',
    'sub/up': '../../outside/secret.txt',
  });
  const hfs = await HostFilesystem.open({ root: ws.root, stateDir: ws.state });
  open.push(hfs);
  return { hfs, outside };
}

describe('a link out of the root is refused in the one wording every backend gives', () => {
  it('read, list, stat, exists, realpath and write of a path through such a link', async () => {
    const { hfs, outside } = await withLinksOut();
    const calls: ReadonlyArray<readonly [string, string, () => Promise<unknown>]> = [
      ['readBytes', 'out', () => hfs.readBytes('out')],
      ['read', 'hop', () => hfs.read('hop')],
      ['read', 'sub/up', () => hfs.read('sub/up')],
      ['read', 'out-missing', () => hfs.read('out-missing')],
      ['read', 'outdir/secret.txt', () => hfs.read('outdir/secret.txt')],
      ['list', 'out', () => hfs.list('out')],
      ['list', 'hop', () => hfs.list('hop')],
      ['list', 'outdir', () => hfs.list('outdir')],
      ['stat', 'outdir/secret.txt', () => hfs.stat('outdir/secret.txt')],
      ['exists', 'outdir/secret.txt', () => hfs.exists('outdir/secret.txt')],
      ['realpath', 'out', () => hfs.realpath('out')],
      ['write', 'out', () => hfs.write('out', 'x')],
      ['write', 'outdir/new.txt', () => hfs.write('outdir/new.txt', 'x')],
    ];
    for (const [op, p, call] of calls) {
      const err = await refusal(call);
      const expected = linkOutsideRoot(op, p);
      expect({ code: err.code, op: err.op, path: err.path, reason: err.reason, hint: err.hint }, `${op} ${p}: ${err.message}`).toEqual({
        code: expected.code,
        op,
        path: p,
        reason: expected.reason,
        hint: expected.hint,
      });
      expect(err.message).not.toContain(outside);
    }
    expect(nodeFs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect(nodeFs.existsSync(path.join(outside, 'new.txt'))).toBe(false);
  });

  it('a path that climbs above the root is refused as core refuses it', async () => {
    const { hfs } = await withLinksOut();
    for (const [p, call] of [
      ['../x', () => hfs.read('../x')],
      ['..', () => hfs.list('..')],
    ] as const) {
      const err = await refusal(call);
      let expected: FsError | undefined;
      try {
        resolvePath(p, 'read');
      } catch (e) {
        expected = e as FsError;
      }
      expect([err.code, err.reason, err.hint]).toEqual([expected?.code, expected?.reason, expected?.hint]);
    }
  });
});
