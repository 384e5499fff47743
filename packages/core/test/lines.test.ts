import { describe, expect, it } from 'vitest';
import { LineSplitter, splitLines } from '../src/lines.ts';
import { unitsTouched } from './support/string-work.ts';

function feed(chunks: readonly string[]): string[] {
  const s = new LineSplitter();
  const out: string[] = [];
  for (const c of chunks) out.push(...s.push(c));
  out.push(...s.end());
  return out;
}

describe('splitLines', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['a', ['a']],
    ['a\n', ['a']],
    ['a\nb', ['a', 'b']],
    ['a\nb\n', ['a', 'b']],
    ['a\r\nb\r\n', ['a', 'b']],
    ['a\n\n', ['a', '']],
    ['\n', ['']],
    ['\n\n\n', ['', '', '']],
    ['a\rb\n', ['a\rb']],
    ['a\r\r\n', ['a\r']],
    ['a\r', ['a']],
    ['mixed\r\nends\nhere', ['mixed', 'ends', 'here']],
    ['日本\n😀\r\n', ['日本', '😀']],
  ])('%j → %j', (input, expected) => {
    expect(splitLines(input)).toEqual(expected);
  });
});

describe('LineSplitter', () => {
  it('a CR at the end of one chunk and its LF at the start of the next make one terminator', () => {
    expect(feed(['a\r', '\nb\r', '\n'])).toEqual(['a', 'b']);
  });

  it('a line spread over many chunks is assembled', () => {
    expect(feed(['he', 'll', 'o', '\nwor', 'ld'])).toEqual(['hello', 'world']);
  });

  it.each(['a\r\nb\n\nc\r\n', 'x\ny\r\n\r\nz', '\r\n\r\n', 'no newline at all'])('one-character chunks give the same lines as one chunk: %j', (input) => {
    expect(feed([...input])).toEqual(splitLines(input));
  });

  it('push returns only completed lines', () => {
    const s = new LineSplitter();
    expect(s.push('abc')).toEqual([]);
    expect(s.push('def\ngh')).toEqual(['abcdef']);
    expect(s.end()).toEqual(['gh']);
  });

  it('an empty chunk completes nothing', () => {
    const s = new LineSplitter();
    s.push('x');
    expect(s.push('')).toEqual([]);
    expect(s.pendingLength).toBe(1);
  });

  it('pendingLength is the unfinished line in UTF-16 units', () => {
    const s = new LineSplitter();
    s.push('line\n😀ab');
    expect(s.pendingLength).toBe(4);
    s.push('\n');
    expect(s.pendingLength).toBe(0);
  });

  it('end with nothing pending yields nothing, and the splitter can be reused', () => {
    const s = new LineSplitter();
    expect(s.end()).toEqual([]);
    s.push('a');
    expect(s.end()).toEqual(['a']);
    expect(s.end()).toEqual([]);
    expect(s.push('b\n')).toEqual(['b']);
  });

  it('a CR pending at a chunk end is not yet stripped from the unfinished line', () => {
    const s = new LineSplitter();
    s.push('a\r');
    expect(s.pendingLength).toBe(2);
    expect(s.push('b\n')).toEqual(['a\rb']);
  });

  it('a line streamed in thousands of pieces comes out whole, with pendingIncludes exact at every step', () => {
    const s = new LineSplitter();
    const line = Array.from({ length: 5000 }, (_, i) => `p${i};`).join('');
    let expectedSeen = '';
    for (let at = 0; at < line.length; at += 7) {
      const piece = line.slice(at, at + 7);
      // The oracle: the unfinished line and the piece, joined naively.
      for (const needle of ['p4999;', 'p12;p13', ';p2', 'zz']) expect(s.pendingIncludes(piece, needle)).toBe((expectedSeen + piece).includes(needle));
      s.skip(piece);
      expectedSeen += piece;
      expect(s.pendingLength).toBe(expectedSeen.length);
    }
    expect(s.push('\r\nnext')).toEqual([line]);
    expect(s.pendingIncludes('', 'next')).toBe(true);
    expect(s.pendingIncludes('', 'p1')).toBe(false);
    expect(s.end()).toEqual(['next']);
  });

  it('a needle straddling several one-character pieces is found', () => {
    const s = new LineSplitter();
    for (const c of 'abcde') s.push(c);
    expect(s.pendingIncludes('f', 'abcdef')).toBe(true);
    expect(s.pendingIncludes('g', 'abcdef')).toBe(false);
    expect(s.pendingIncludes('', 'bcd')).toBe(true);
    s.push('f\nxy');
    expect(s.pendingIncludes('', 'abc')).toBe(false);
    expect(s.pendingIncludes('z', 'xyz')).toBe(true);
  });
});

describe('LineSplitter.pushIncluding', () => {
  /** A small deterministic generator, so that a failure names a case that can be run again. */
  function random(seed: number): () => number {
    let x = seed;
    return () => {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      return x / 2_147_483_648;
    };
  }

  it('gives exactly the lines push gives that hold the needle, at their indexes, across any chunking', () => {
    const alphabet = ['a', 'b', 'ab', '\n', '\r', '\r\n', 'x', 'é', '😀'];
    const needles = ['ab', 'a', 'b\r', 'xa', '😀a', 'aba', '', 'a\nb'];
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed);
      let text = '';
      const size = Math.floor(next() * 60);
      for (let i = 0; i < size; i++) text += alphabet[Math.floor(next() * alphabet.length)];
      const needle = needles[seed % needles.length] as string;
      const oracle = new LineSplitter();
      const subject = new LineSplitter();
      let at = 0;
      while (at < text.length) {
        const end = Math.min(text.length, at + 1 + Math.floor(next() * 12));
        const chunk = text.slice(at, end);
        at = end;
        const all = oracle.push(chunk);
        const got = subject.pushIncluding(chunk, needle);
        const want = all.flatMap((line, i) => (line.includes(needle) ? [[line, i] as const] : []));
        expect(
          got.lines.map((line, i) => [line, got.indexes[i]]),
          `seed ${seed}: ${JSON.stringify(text)} / ${JSON.stringify(needle)}`,
        ).toEqual(want);
        expect(got.completed, `seed ${seed}`).toBe(all.length);
        expect(subject.pendingLength).toBe(oracle.pendingLength);
      }
      expect(subject.end()).toEqual(oracle.end());
    }
  });

  it('a needle far into a long chunk: the lines between are counted, not built', () => {
    const s = new LineSplitter();
    s.push('start of a line ');
    const chunk = `${'filler\n'.repeat(10_000)}the needle here\r\nmore\nneedle again\nrest`;
    const got = s.pushIncluding(chunk, 'needle');
    expect(got.lines).toEqual(['the needle here', 'needle again']);
    expect(got.indexes).toEqual([10_000, 10_002]);
    expect(got.completed).toBe(10_003);
    expect(s.end()).toEqual(['rest']);
  });
});

describe('a single giant line costs linear work', () => {
  const CHUNKS = 2000;
  const chunk = 'x'.repeat(999);
  const total = CHUNKS * chunk.length;

  it('push: a line without a newline streamed in 2,000 chunks', async () => {
    let line = '';
    const units = await unitsTouched(() => {
      const s = new LineSplitter();
      for (let i = 0; i < CHUNKS; i++) expect(s.push(chunk)).toEqual([]);
      line = s.end()[0] as string;
    });
    expect(line.length).toBe(total);
    // Linear: a few passes over the input. Re-joining the line per chunk would be about CHUNKS / 2 passes.
    expect(units).toBeLessThan(8 * total);
  });

  it('the search path: pendingIncludes and skip on every chunk, the needle only at the very end', async () => {
    const needle = 'NEEDLE';
    let found = false;
    const units = await unitsTouched(() => {
      const s = new LineSplitter();
      for (let i = 0; i < CHUNKS; i++) {
        expect(s.pendingIncludes(chunk, needle)).toBe(false);
        s.skip(chunk);
      }
      found = s.pendingIncludes(`${needle}\n`, needle);
      s.push(`${needle}\n`);
    });
    expect(found).toBe(true);
    expect(units).toBeLessThan(8 * total);
  });

  it('the same counter does see quadratic work (the check can fail)', async () => {
    // The old way: the unfinished line re-joined with each chunk as it arrives.
    const units = await unitsTouched(() => {
      let pending = '';
      for (let i = 0; i < CHUNKS; i++) pending = [pending, chunk].join('');
      return pending;
    });
    expect(units).toBeGreaterThan(100 * total);
  });
});
