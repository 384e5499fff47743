import { describe, expect, it } from 'vitest';
import { codePointOffset, compileGrep, scanChunks } from '../src/grep.ts';
import type { GrepMatch } from '../src/types.ts';

const enc = (s: string) => new TextEncoder().encode(s);

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Cuts `bytes` into chunks of `size` (the last may be shorter). */
async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

async function scan(bytes: Uint8Array, pattern: string, size = 65536, limit = 1000, options = {}): Promise<GrepMatch[]> {
  const out: GrepMatch[] = [];
  for await (const m of scanChunks('f', chunked(bytes, size), compileGrep(pattern, options), limit)) out.push(m);
  return out;
}

const lineOf = (m: GrepMatch) => [m.line, m.text];

describe('compileGrep', () => {
  it('finds every non-overlapping span', () => {
    expect(compileGrep('aa').spans('aaaaa')).toEqual([
      { start: 0, end: 2 },
      { start: 2, end: 4 },
    ]);
  });

  it('no match is an empty list', () => {
    expect(compileGrep('x').spans('abc')).toEqual([]);
  });

  it('spans are code points when the line has surrogate pairs', () => {
    expect(compileGrep('b').spans('😀😀b')).toEqual([{ start: 2, end: 3 }]);
    expect(compileGrep('😀+').spans('a😀😀b')).toEqual([{ start: 1, end: 3 }]);
  });

  it('unicode mode: . matches a whole astral character', () => {
    expect(compileGrep('a.b').spans('a😀b')).toEqual([{ start: 0, end: 3 }]);
  });

  it('zero-length matches step over surrogate pairs without splitting them', () => {
    expect(compileGrep('').spans('😀a')).toEqual([
      { start: 0, end: 0 },
      { start: 1, end: 1 },
      { start: 2, end: 2 },
    ]);
    expect(compileGrep('^').spans('abc')).toEqual([{ start: 0, end: 0 }]);
    expect(compileGrep('x*').spans('ab')).toEqual([
      { start: 0, end: 0 },
      { start: 1, end: 1 },
      { start: 2, end: 2 },
    ]);
  });

  it('ignoreCase', () => {
    expect(compileGrep('abc', { ignoreCase: true }).spans('xABCx')).toEqual([{ start: 1, end: 4 }]);
  });

  it('literal escapes every metacharacter', () => {
    const special = '\\^$.*+?()[]{}|/-';
    expect(compileGrep(special, { literal: true }).spans(`x${special}x`)).toEqual([{ start: 1, end: 1 + special.length }]);
    expect(compileGrep('a.b', { literal: true }).spans('axb')).toEqual([]);
  });

  it('a pattern valid only without the u flag still compiles', () => {
    // `\-` outside a class is an identity escape only in non-Unicode mode.
    expect(compileGrep('a\\-b').spans('a-b')).toEqual([{ start: 0, end: 3 }]);
  });

  it.each(['(', '[a-', '*', 'a{2,1}', '(?<x'])('bad regex %j is EBADPATTERN', (pattern) => {
    expect(() => compileGrep(pattern)).toThrow(expect.objectContaining({ code: 'EBADPATTERN', op: 'grep' }));
  });

  it('a non-string pattern is EBADPATTERN', () => {
    expect(() => compileGrep(undefined as unknown as string)).toThrow(expect.objectContaining({ code: 'EBADPATTERN' }));
  });

  it('the matcher is reusable: lastIndex never leaks between lines', () => {
    const m = compileGrep('a');
    expect(m.spans('aaa').length).toBe(3);
    expect(m.spans('a')).toEqual([{ start: 0, end: 1 }]);
  });
});

describe('codePointOffset', () => {
  it.each<[string, number, number]>([
    ['abc', 0, 0],
    ['abc', 3, 3],
    ['😀abc', 2, 1],
    ['😀abc', 3, 2],
    ['a😀😀b', 5, 3],
    ['日本', 2, 2],
    ['a😀', 2, 2], // an index inside a pair counts the high surrogate as one
  ])('%j at %i → %i', (s, index, expected) => {
    expect(codePointOffset(s, index)).toBe(expected);
  });
});

describe('scanChunks', () => {
  const TEXT = enc('alpha\r\nbeta needle\r\n€uro needle\nlast needle');

  it.each([1, 2, 3, 5, 7, 64, 65536])('gives the same lines for chunks of %i bytes', async (size) => {
    const matches = await scan(TEXT, 'needle', size);
    expect(matches.map(lineOf)).toEqual([
      [2, 'beta needle'],
      [3, '€uro needle'],
      [4, 'last needle'],
    ]);
    expect(matches.map((m) => m.matchStart)).toEqual([5, 5, 5]);
  });

  it('a CR split from its LF by a chunk boundary still ends the line', async () => {
    const bytes = enc('ab\r\ncd\r\n');
    const matches = await scan(bytes, '$', 3);
    expect(matches.map(lineOf)).toEqual([
      [1, 'ab'],
      [2, 'cd'],
    ]);
  });

  it('a lone CR is part of the line, not a terminator', async () => {
    expect((await scan(enc('a\rb\n'), 'b')).map(lineOf)).toEqual([[1, 'a\rb']]);
  });

  it('limit stops after that many lines', async () => {
    const matches = await scan(enc('x\nx\nx\nx\n'), 'x', 1, 2);
    expect(matches.map((m) => m.line)).toEqual([1, 2]);
  });

  it('limit 0 yields nothing', async () => {
    expect(await scan(enc('x\n'), 'x', 65536, 0)).toEqual([]);
  });

  it('binary: a NUL in the first chunk skips the file', async () => {
    expect(await scan(concat(enc('needle\n'), new Uint8Array([0])), 'needle')).toEqual([]);
  });

  it.each([1, 100, 4096])('binary: a NUL within the first 8 KiB skips the file even with %i-byte chunks', async (size) => {
    const bytes = concat(enc('needle\n'), enc('x'.repeat(5000)), new Uint8Array([0]), enc('\n'));
    expect(await scan(bytes, 'needle', size)).toEqual([]);
  });

  it('a NUL after the detection window stops the scan but keeps earlier matches', async () => {
    const bytes = concat(enc('needle 1\n'), enc(`${'x'.repeat(99)}\n`.repeat(700)), new Uint8Array([0]), enc('\nneedle 2\n'));
    const matches = await scan(bytes, 'needle', 65536);
    expect(matches.map(lineOf)).toEqual([[1, 'needle 1']]);
  });

  it.each([1, 2, 65536])('a UTF-8 BOM is stripped with %i-byte chunks', async (size) => {
    const matches = await scan(concat(new Uint8Array([0xef, 0xbb, 0xbf]), enc('needle\n')), '^needle', size);
    expect(matches.map(lineOf)).toEqual([[1, 'needle']]);
  });

  it.each([1, 3, 65536])('UTF-16LE with BOM is decoded with %i-byte chunks', async (size) => {
    const body = 'one\r\ntwo needle\r\n';
    const bytes = new Uint8Array(2 + body.length * 2);
    bytes[0] = 0xff;
    bytes[1] = 0xfe;
    for (let i = 0; i < body.length; i++) bytes[2 + i * 2] = body.charCodeAt(i);
    const matches = await scan(bytes, 'needle', size);
    expect(matches.map(lineOf)).toEqual([[2, 'two needle']]);
    expect(matches[0]?.matchStart).toBe(4);
  });

  it('UTF-16BE with BOM is decoded', async () => {
    const body = 'a\nneedle\n';
    const bytes = new Uint8Array(2 + body.length * 2);
    bytes[0] = 0xfe;
    bytes[1] = 0xff;
    for (let i = 0; i < body.length; i++) bytes[3 + i * 2] = body.charCodeAt(i);
    expect((await scan(bytes, 'needle')).map(lineOf)).toEqual([[2, 'needle']]);
  });

  it('a 4-byte character split over 1-byte chunks keeps code-point spans right', async () => {
    const matches = await scan(enc('😀😀 needle\n'), 'needle', 1);
    expect([matches[0]?.matchStart, matches[0]?.matchEnd]).toEqual([3, 9]);
  });

  it('empty input yields nothing', async () => {
    expect(await scan(new Uint8Array(0), '^')).toEqual([]);
  });

  it('only newlines: every line is empty and numbered', async () => {
    expect((await scan(enc('\n\n\n'), '^$')).map(lineOf)).toEqual([
      [1, ''],
      [2, ''],
      [3, ''],
    ]);
  });

  it('closes the source when the consumer stops early', async () => {
    let closed = false;
    async function* source(): AsyncGenerator<Uint8Array> {
      try {
        yield enc('x\n');
        yield enc('x\n');
      } finally {
        closed = true;
      }
    }
    for await (const _ of scanChunks('f', source(), compileGrep('x'), 10)) break;
    expect(closed).toBe(true);
  });

  it('reports the path it was given', async () => {
    const out: GrepMatch[] = [];
    for await (const m of scanChunks('dir/x.txt', chunked(enc('hit\n'), 10), compileGrep('hit'), 5)) out.push(m);
    expect(out[0]?.path).toBe('dir/x.txt');
  });
});

describe('scanChunks literal skipping', () => {
  it('finds exactly what the regex path finds, at the same line numbers, across chunk boundaries', async () => {
    const { compileGrep, scanChunks } = await import('@ctxfs/core');
    let seed = 5;
    const rand = (n: number) => {
      // Math.imul keeps the product exact; the high bits are the random ones.
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return Math.floor((seed / 0x80000000) * n);
    };
    const words = ['alpha', 'beta', 'needle', 'nee', 'dle', 'gamma', '😀', '漢字', '\r\n', '\n', '\n', ' '];
    for (let round = 0; round < 200; round++) {
      const text = Array.from({ length: 50 + rand(400) }, () => words[rand(words.length)]).join('');
      const bytes = new TextEncoder().encode(text);
      const size = 1 + rand(40);
      const chunked = async function* () {
        for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
      };
      const fast = compileGrep('needle');
      expect(fast.literal).toBe('needle');
      // The same pattern as a regex with no literal hint takes the line-by-line path.
      const slow = { ...compileGrep('needle'), literal: undefined };
      const a: unknown[] = [];
      for await (const m of scanChunks('f', chunked(), fast, 10_000)) a.push(m);
      const b: unknown[] = [];
      for await (const m of scanChunks('f', chunked(), slow, 10_000)) b.push(m);
      expect(a, `round ${round}`).toEqual(b);
    }
  });

  it('offers a literal only for plain case-sensitive patterns', async () => {
    const { compileGrep } = await import('@ctxfs/core');
    expect(compileGrep('a.b').literal).toBeUndefined();
    expect(compileGrep('a.b', { literal: true }).literal).toBe('a.b');
    expect(compileGrep('abc', { ignoreCase: true }).literal).toBeUndefined();
    expect(compileGrep('plain words-here').literal).toBe('plain words-here');
  });
});
