/**
 * linkLoopClosure: which link of a loop leads back into it, found by the
 * links' text alone, for an ELOOP refusal to name it; and the refusal's
 * wording, under the path the caller asked for.
 */
import { describe, expect, it } from 'vitest';
import { linkLoopClosure, symlinkLoop, toFsError } from '../src/index.ts';

/** A tree of links: path → target text; anything else is a directory or a file. */
const links =
  (tree: Record<string, string>) =>
  async (path: string): Promise<string | undefined> =>
    tree[path];

describe('linkLoopClosure', () => {
  it('names the link that leads back, through a link into the loop and below it', async () => {
    const read = links({ loop1: 'loop2', loop2: 'loop1', via: 'loop1', 'd/up': '../loop2' });
    expect(await linkLoopClosure('loop1', read)).toEqual({ link: 'loop2', target: 'loop1' });
    expect(await linkLoopClosure('loop2', read)).toEqual({ link: 'loop1', target: 'loop2' });
    expect(await linkLoopClosure('via/a/b.txt', read)).toEqual({ link: 'loop2', target: 'loop1' });
    expect(await linkLoopClosure('d/up', read)).toEqual({ link: 'loop1', target: 'loop2' });
  });

  it('a link to itself leads back to itself; a target from the root (leading /) is followed from the root', async () => {
    expect(await linkLoopClosure('d/self', links({ 'd/self': 'self' }))).toEqual({ link: 'd/self', target: 'd/self' });
    expect(await linkLoopClosure('a', links({ a: '/d/b', 'd/b': '../a' }))).toEqual({ link: 'd/b', target: 'a' });
  });

  it('names nothing for a chain that ends, leads out of the root or runs too long', async () => {
    expect(await linkLoopClosure('a', links({ a: 'b', b: 'c' }))).toBeUndefined();
    expect(await linkLoopClosure('a', links({ a: '../../etc', b: 'a' }))).toBeUndefined();
    const long = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`l${i}`, `l${i + 1}`]));
    expect(await linkLoopClosure('l0', links(long))).toBeUndefined();
    expect(await linkLoopClosure('', links({}))).toBeUndefined();
  });
});

describe('the refusal of a loop', () => {
  it('is ELOOP under the path asked for, naming the closing link when known, with what to do', () => {
    const named = symlinkLoop('readBytes', 'loop1', { closure: { link: 'loop2', target: 'loop1' } });
    expect(named).toMatchObject({ code: 'ELOOP', op: 'readBytes', path: 'loop1' });
    expect(named.message).toBe(
      "ELOOP: the symbolic links in the path go round in a loop ('loop2' leads back to 'loop1'), readBytes 'loop1' (a loop of links leads to no file: name a path that does not go through it, or point one of its links at a real file or directory)",
    );
    expect(symlinkLoop('stat', 'd/self', { closure: { link: 'd/self', target: 'd/self' } }).reason).toContain("('d/self' leads back to itself)");
  });

  it("a backend's ELOOP errno says the same, under the path given", () => {
    const err = toFsError(Object.assign(new Error('ELOOP: too many symbolic links encountered'), { code: 'ELOOP' }), 'walk', 'a/b');
    expect(err).toMatchObject({ code: 'ELOOP', op: 'walk', path: 'a/b' });
    expect(err.reason).toBe('the symbolic links in the path go round in a loop, or nest too deep to follow');
    expect(err.hint).toBe(symlinkLoop('walk', 'a/b').hint);
  });
});
