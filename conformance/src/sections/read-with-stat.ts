/**
 * `readWithStat`: a file's bytes and its stat from one look at it. The stat
 * is what `stat` says of the same file, the bytes what `readBytes` reads;
 * it is refused as `readBytes` is (a missing file, a directory, a link out
 * of the root or in a loop), under its own name; a file over `maxBytes` is
 * told by its stat alone; and a file replaced while it is read is answered
 * with its own stat, never with the stat of the file that replaced it.
 *
 * @module
 */

import { type FsError, isFsError, linkOutsideRoot } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, itWhen, type SuiteContext, text, utf8 } from '../context.ts';

const DIGITS = '0123456789';

async function refusal(call: () => Promise<unknown>): Promise<FsError> {
  const err = await call().then(
    (answer) => new Error(`expected a refusal, it answered ${JSON.stringify(answer)}`),
    (e: unknown) => e,
  );
  if (isFsError(err)) return err;
  throw err;
}

export function readWithStatSection(ctx: SuiteContext): void {
  const withLinks = itWhen(ctx.caps.symlinks);

  it('answers the bytes readBytes reads and the stat stat gives, of the same file', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS, 'sub/e.txt': '', 'sub/é ü.txt': 'ü\n' } });
    for (const path of ['d.txt', 'sub/e.txt', 'sub/é ü.txt']) {
      const { stat, bytes } = await fs.readWithStat(path);
      expect(bytes, path).toBeInstanceOf(Uint8Array);
      expect(bytes, path).toEqual(await fs.readBytes(path));
      expect(stat, path).toEqual(await fs.stat(path));
      expect(stat.kind, path).toBe('file');
      expect(stat.size, path).toBe(bytes?.byteLength);
    }
  });

  it('the bytes are a copy the caller may mutate', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    (await fs.readWithStat('d.txt')).bytes?.fill(0);
    expect(text((await fs.readWithStat('d.txt')).bytes ?? new Uint8Array())).toBe(DIGITS);
  });

  it('a file over maxBytes is answered by its stat alone; one at maxBytes is read', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS, 'e.txt': '' } });
    const over = await fs.readWithStat('d.txt', { maxBytes: 9 });
    expect(over.bytes).toBeUndefined();
    expect(over.stat).toEqual(await fs.stat('d.txt'));
    expect(text((await fs.readWithStat('d.txt', { maxBytes: 10 })).bytes ?? new Uint8Array())).toBe(DIGITS);
    expect((await fs.readWithStat('e.txt', { maxBytes: 0 })).bytes?.byteLength).toBe(0);
  });

  it.each([
    ['negative', -1],
    ['fractional', 0.5],
    ['NaN', Number.NaN],
  ])('a %s maxBytes is EINVAL', async (_label, maxBytes) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS } });
    expect(await codeOf(fs.readWithStat('d.txt', { maxBytes }))).toBe('EINVAL');
  });

  it.each([
    ['a missing file', 'nope.txt', 'ENOENT'],
    ['a directory', 'dir', 'EISDIR'],
    ['the root', '', 'EISDIR'],
    ['a child of a file', 'd.txt/x', 'ENOTDIR'],
    ['a file with a trailing slash', 'd.txt/', 'ENOTDIR'],
    ['a path that climbs out', '../x', 'EPATHESCAPE'],
  ])('on %s (%j) it is %s, reported as readWithStat', async (_label, path, code) => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS }, dirs: ['dir'] });
    const err = await refusal(() => fs.readWithStat(path));
    expect(err.code, err.message).toBe(code);
    expect(err.op).toBe('readWithStat');
  });

  withLinks('a link inside the root is read through: its target’s bytes, the stat stat gives of the link', async () => {
    const fs = await ctx.make({ files: { 'd.txt': DIGITS }, links: { ln: 'd.txt' } });
    const { stat, bytes } = await fs.readWithStat('ln');
    expect(text(bytes ?? new Uint8Array())).toBe(DIGITS);
    expect(stat).toEqual(await fs.stat('ln'));
  });

  withLinks('a link out of the root, or in a loop, is refused as readBytes refuses it', async () => {
    const fs = await ctx.make({ files: { 'ok.txt': 'ok\n' }, links: { out: '/dev/null', hop: 'out', loop1: 'loop2', loop2: 'loop1' } });
    for (const path of ['out', 'hop']) {
      const err = await refusal(() => fs.readWithStat(path));
      const expected = linkOutsideRoot('readWithStat', path);
      expect({ code: err.code, op: err.op, path: err.path, reason: err.reason, hint: err.hint }, err.message).toEqual({
        code: expected.code,
        op: 'readWithStat',
        path,
        reason: expected.reason,
        hint: expected.hint,
      });
      expect(err.message).not.toContain('/dev');
    }
    const loop = await refusal(() => fs.readWithStat('loop1'));
    const asRead = await refusal(() => fs.readBytes('loop1'));
    expect([loop.code, loop.path, loop.reason]).toEqual([asRead.code, asRead.path, asRead.reason]);
  });

  it("a file replaced while it is read is told with its own stat, never with another's", async () => {
    // Two versions of different sizes: a stat of one beside the bytes of the other shows in the size.
    const A = 'a'.repeat(10);
    const B = 'b'.repeat(3000);
    const fs = await ctx.make({ files: { 'f.txt': A } });
    const check = ({ stat, bytes }: { stat: { size: number; kind: string }; bytes: Uint8Array | undefined }) => {
      const got = text(bytes ?? new Uint8Array());
      expect([A, B].includes(got), `bytes of neither version (${got.length} bytes)`).toBe(true);
      expect(stat.size, `a stat of ${stat.size} bytes with ${got.length} bytes`).toBe(got.length);
      expect(stat.kind).toBe('file');
    };
    // Readers and a writer running side by side, so that a backend whose calls really run at once (a container's
    // execs) has a replacement land between any two steps of a read. (Within one thread of the host or in memory,
    // a replacement lands only between whole calls: packages/host/test/read-with-stat-default.test.ts replaces the
    // file from another thread.)
    let writing = true;
    const writer = (async () => {
      try {
        for (let i = 0; i < 24; i++) await fs.writeBytes('f.txt', utf8(i % 2 === 0 ? B : A));
      } finally {
        writing = false;
      }
    })();
    let answers = 0;
    const reader = async () => {
      while (writing) {
        check(await fs.readWithStat('f.txt'));
        answers++;
        // A backend that answers without I/O resolves within one turn: let the writer's I/O run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all([writer, reader(), reader(), reader()]);
    expect(answers).toBeGreaterThan(0);
  });
}
