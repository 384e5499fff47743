/**
 * Compare-and-swap writes (`ifMatch`): a write commits only over the file it
 * expects, checked at the commit; otherwise `ECONFLICT` naming the current
 * hash, with the file untouched. A backend that does not declare
 * `compareAndSwap` must refuse `ifMatch` with `EUNSUPPORTED`, never ignore it.
 *
 * @module
 */

import { type Filesystem, isFsError, sha256Hex } from '@ctxfs/core';
import { expect, it } from 'vitest';
import { codeOf, itWhen, type SuiteContext, text, utf8 } from '../context.ts';

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected the write to be refused'),
    (err: unknown) => err,
  );
}

export function compareAndSwapSection(ctx: SuiteContext): void {
  const cas = ctx.caps.compareAndSwap && !ctx.caps.readOnly;
  const OLD = sha256Hex(utf8('old'));

  itWhen(cas)('ifMatch with the current hash writes', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    await fs.writeBytes('a.txt', utf8('new'), { ifMatch: OLD });
    expect(text(await fs.readBytes('a.txt'))).toBe('new');
  });

  itWhen(cas)('ifMatch with another hash is ECONFLICT naming the current hash, and the file is untouched', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    const err = await rejection(fs.writeBytes('a.txt', utf8('new'), { ifMatch: sha256Hex(utf8('something else')) }));
    expect(isFsError(err, 'ECONFLICT')).toBe(true);
    expect((err as Error).message).toContain(OLD);
    expect(text(await fs.readBytes('a.txt'))).toBe('old');
  });

  itWhen(cas)("ifMatch 'absent' on an existing file is ECONFLICT and leaves it", async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    const err = await rejection(fs.write('a.txt', 'new', { ifMatch: 'absent' }));
    expect(isFsError(err, 'ECONFLICT')).toBe(true);
    expect((err as Error).message).toContain(OLD);
    expect(text(await fs.readBytes('a.txt'))).toBe('old');
  });

  itWhen(cas)("ifMatch 'absent' on a missing file creates it", async () => {
    const fs = await ctx.make();
    await fs.write('new.txt', 'fresh', { ifMatch: 'absent' });
    expect(text(await fs.readBytes('new.txt'))).toBe('fresh');
  });

  itWhen(cas)('ifMatch with a hash on a missing file is ECONFLICT saying it does not exist, and creates nothing', async () => {
    const fs = await ctx.make();
    const err = await rejection(fs.write('gone.txt', 'new', { ifMatch: OLD }));
    expect(isFsError(err, 'ECONFLICT')).toBe(true);
    expect((err as Error).message).toContain('does not exist');
    expect(await fs.exists('gone.txt')).toBe(false);
  });

  itWhen(cas)('openWrite checks ifMatch at close: a change between open and close is caught', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    const w = await fs.openWrite('a.txt', { ifMatch: OLD });
    await w.write(utf8('mine'));
    await fs.write('a.txt', 'theirs');
    const err = await rejection(w.close());
    expect(isFsError(err, 'ECONFLICT')).toBe(true);
    expect((err as Error).message).toContain(sha256Hex(utf8('theirs')));
    expect(text(await fs.readBytes('a.txt'))).toBe('theirs');
  });

  itWhen(cas)('openWrite with a stale ifMatch at open still commits when the file matches at close', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    const w = await fs.openWrite('a.txt', { ifMatch: sha256Hex(utf8('next')) });
    await fs.write('a.txt', 'next');
    await w.write(utf8('mine'));
    await w.close();
    expect(text(await fs.readBytes('a.txt'))).toBe('mine');
  });

  itWhen(cas)('a large streamed write (beyond any staging buffer) honours ifMatch at close', async () => {
    const fs = await ctx.make({ files: { 'big.bin': 'old' } });
    const chunk = new Uint8Array(1 << 20).fill(7);
    const stream = async (ifMatch: string) => {
      const w = await fs.openWrite('big.bin', { ifMatch });
      for (let i = 0; i < 9; i++) await w.write(chunk);
      return w;
    };
    const stale = await stream(OLD);
    await fs.write('big.bin', 'theirs');
    expect(await codeOf(stale.close())).toBe('ECONFLICT');
    expect(text(await fs.readBytes('big.bin'))).toBe('theirs');
    await (await stream(sha256Hex(utf8('theirs')))).close();
    expect((await fs.stat('big.bin')).size).toBe(9 << 20);
  });

  itWhen(cas)('append honours ifMatch too', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    expect(await codeOf(fs.writeBytes('a.txt', utf8('+x'), { mode: 'append', ifMatch: sha256Hex(utf8('other')) }))).toBe('ECONFLICT');
    await fs.writeBytes('a.txt', utf8('+y'), { mode: 'append', ifMatch: OLD });
    expect(text(await fs.readBytes('a.txt'))).toBe('old+y');
  });

  it.each(['', 'absent ', 'ABSENT', OLD.toUpperCase(), OLD.slice(1), `${OLD}0`, 'g'.repeat(64)])('ifMatch %j is EINVAL', async (bad) => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    expect(await codeOf(fs.writeBytes('a.txt', utf8('new'), { ifMatch: bad }))).toBe('EINVAL');
    expect(text(await fs.readBytes('a.txt'))).toBe('old');
  });

  itWhen(cas)('racing compare-and-swap increments lose nothing', async () => {
    const fs = await ctx.make({ files: { 'n.txt': '0' } });
    const writers = 4;
    const each = 15;
    const increment = async (f: Filesystem): Promise<number> => {
      let conflicts = 0;
      for (;;) {
        const bytes = await f.readBytes('n.txt');
        const next = String(Number(text(bytes)) + 1);
        try {
          await f.writeBytes('n.txt', utf8(next), { ifMatch: sha256Hex(bytes) });
          return conflicts;
        } catch (err) {
          if (!isFsError(err, 'ECONFLICT')) throw err;
          conflicts++;
        }
      }
    };
    await Promise.all(
      Array.from({ length: writers }, async () => {
        for (let i = 0; i < each; i++) await increment(fs);
      }),
    );
    expect(text(await fs.readBytes('n.txt'))).toBe(String(writers * each));
  });

  itWhen(!cas)('compareAndSwap is declared false (or the instance is read-only): ifMatch is refused with EUNSUPPORTED, the file untouched', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'old' } });
    expect(await codeOf(fs.writeBytes('a.txt', utf8('new'), { ifMatch: OLD }))).toBe(ctx.caps.readOnly ? 'EROFS' : 'EUNSUPPORTED');
    expect(text(await fs.readBytes('a.txt'))).toBe('old');
  });
}
