import { describe, expect, it } from 'vitest';
// The conformance table has no imports; checking it here keeps the table and
// the one path implementation in agreement without a backend in between.
import { HOSTILE_PATHS, pathOfBytes, showPath } from '../../../conformance/src/hostile-paths.ts';
import { FsError, isFsError } from '../src/errors.ts';
import {
  baseName,
  DEFAULT_PATH_LIMITS,
  describeInput,
  displayPath,
  isAddressableName,
  isSameOrInside,
  joinPath,
  parentPath,
  pathSegments,
  resolvePath,
  trailingSlashError,
} from '../src/path.ts';

function refusal(input: unknown, limits = DEFAULT_PATH_LIMITS): FsError | undefined {
  try {
    resolvePath(input, 'stat', limits);
  } catch (err) {
    if (err instanceof FsError) return err;
    throw err;
  }
  return undefined;
}

describe('resolvePath against the hostile-path table', () => {
  it.each(HOSTILE_PATHS.map((r) => [showPath(r.path), r] as const))('%s', (_shown, row) => {
    if (row.code !== undefined) {
      const err = refusal(row.path);
      expect(err?.code).toBe(row.code);
      expect(err?.op).toBe('stat');
      expect(err?.hint.length).toBeGreaterThan(0);
    } else {
      expect(resolvePath(row.path, 'stat').path).toBe(row.resolves);
    }
  });
});

describe('resolvePath', () => {
  it.each([
    ['', '', false],
    ['.', '', false],
    ['./', '', true],
    ['a', 'a', false],
    ['a/', 'a', true],
    ['a//', 'a', true],
    ['a\\', 'a', true],
    ['a/b/c.txt', 'a/b/c.txt', false],
    ['src\\lib\\..\\index.ts', 'src/index.ts', false],
    ['./a/./b/.', 'a/b', false],
    ['a/b/..', 'a', false],
    ['a/b/../', 'a', true],
  ])('%j -> %j (dirOnly %s)', (input, path, dirOnly) => {
    expect(resolvePath(input, 'stat')).toEqual({ path, dirOnly });
  });

  it('is idempotent on its own output', () => {
    for (const row of HOSTILE_PATHS) {
      if (row.resolves === undefined) continue;
      const once = resolvePath(row.path, 'stat').path;
      expect(resolvePath(once, 'stat').path).toBe(once);
    }
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['number', 7],
    ['object', {}],
    ['buffer', new Uint8Array([0x61])],
  ])('a non-string (%s) is EINVAL', (_label, input) => {
    expect(refusal(input)?.code).toBe('EINVAL');
  });

  it('refuses a URL, which would otherwise be read as a relative path (file:///etc/passwd as file:/etc/passwd)', () => {
    for (const url of ['file:///etc/passwd', 'https://example.com/a.ts', 'git+ssh://host/repo']) {
      expect(refusal(url)).toMatchObject({ code: 'EINVAL', reason: 'a URL is not a path' });
    }
    // A drive stays a drive, and a name with a colon in it stays a name.
    expect(refusal('C://x')?.code).toBe('EPATHESCAPE');
    expect(resolvePath('notes:draft/a.md', 'stat').path).toBe('notes:draft/a.md');
    expect(resolvePath('file:/a', 'stat').path).toBe('file:/a');
  });

  it('carries the operation it was called for', () => {
    try {
      resolvePath('../x', 'rename');
      expect.unreachable();
    } catch (err) {
      expect(isFsError(err, 'EPATHESCAPE')).toBe(true);
      expect((err as FsError).op).toBe('rename');
      expect((err as FsError).path).toBe('../x');
    }
  });

  it('escapes control characters, DEL included, in the reported path', () => {
    const err = refusal('a\u0000b\u007fc\nd');
    expect(err?.code).toBe('EINVAL');
    expect(err?.path).toBe('a\\u0000b\\u007fc\\nd');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the check
    expect(err?.message).not.toMatch(/[\u0000-\u001f\u007f]/);
  });

  it('names the offending control character', () => {
    expect(refusal('a\u0007b')?.reason).toMatch(/U\+0007/);
    expect(refusal('a\u0000b')?.reason).toMatch(/NUL/);
  });

  it('accepts a well-formed surrogate pair and refuses each half', () => {
    expect(resolvePath('😀', 'stat').path).toBe('😀');
    expect(refusal('\ud83d')?.code).toBe('EINVAL');
    expect(refusal('\ude00')?.code).toBe('EINVAL');
  });

  it('checks characters before shape: NUL in an escaping path is EINVAL', () => {
    expect(refusal('../\u0000')?.code).toBe('EINVAL');
    expect(refusal('/\u0001')?.code).toBe('EINVAL');
  });

  it('counts segment length in UTF-8 bytes', () => {
    expect(resolvePath('é'.repeat(127), 'stat').path).toBe('é'.repeat(127));
    expect(refusal('é'.repeat(128))?.code).toBe('ENAMETOOLONG');
    expect(resolvePath(`${'😀'.repeat(63)}abc`, 'stat').path.length).toBe(129);
    expect(refusal(`${'😀'.repeat(63)}abcd`)?.code).toBe('ENAMETOOLONG');
  });

  it('allows exactly 4096 path bytes and refuses 4097', () => {
    const exact = pathOfBytes(4096);
    expect(new TextEncoder().encode(exact).length).toBe(4096);
    expect(resolvePath(exact, 'stat').path).toBe(exact);
    expect(refusal(pathOfBytes(4097))?.code).toBe('ENAMETOOLONG');
  });

  it('measures the path after normalization', () => {
    // 5000 raw bytes, but ./ segments vanish: 2047 bytes remain.
    const padded = `${'./'.repeat(1476)}${pathOfBytes(2047)}`;
    expect(padded.length).toBeGreaterThan(4096);
    expect(resolvePath(padded, 'stat').path).toBe(pathOfBytes(2047));
  });

  it('counts multibyte characters in the path limit', () => {
    // 17 segments of 85 three-byte characters: 4351 bytes in 1461 UTF-16 units.
    const seg = '中'.repeat(85);
    const path = Array.from({ length: 17 }, () => seg).join('/');
    expect(path.length).toBeLessThan(4096);
    expect(refusal(path)?.code).toBe('ENAMETOOLONG');
  });

  it('allows depth 256 and refuses 257', () => {
    expect(resolvePath(`${'d/'.repeat(255)}f`, 'stat').path.split('/').length).toBe(256);
    expect(refusal(`${'d/'.repeat(256)}f`)?.code).toBe('ENAMETOOLONG');
  });

  it('judges depth after .. is resolved', () => {
    expect(resolvePath(`${'d/'.repeat(256)}../f`, 'stat').path.split('/').length).toBe(256);
  });

  describe('limits overrides', () => {
    const tight = { maxDepth: 3, maxSegmentBytes: 4, maxPathBytes: 10 };

    it('maxSegmentBytes', () => {
      expect(resolvePath('abcd', 'stat', tight).path).toBe('abcd');
      expect(refusal('abcde', tight)?.code).toBe('ENAMETOOLONG');
      expect(refusal('éé/é', tight)).toBeUndefined();
      expect(refusal('ééé', tight)?.code).toBe('ENAMETOOLONG');
    });

    it('maxDepth', () => {
      expect(resolvePath('a/b/c', 'stat', tight).path).toBe('a/b/c');
      expect(refusal('a/b/c/d', tight)?.code).toBe('ENAMETOOLONG');
      expect(resolvePath('a/b/c/d/..', 'stat', tight).path).toBe('a/b/c');
    });

    it('maxPathBytes', () => {
      expect(resolvePath('abcd/efgh', 'stat', tight).path).toBe('abcd/efgh');
      expect(resolvePath('ab/cd/efg', 'stat', tight).path).toBe('ab/cd/efg');
      expect(refusal('abcd/efgh/i', { ...tight, maxDepth: 10 })?.code).toBe('ENAMETOOLONG');
    });

    it('generous limits lift the defaults', () => {
      const wide = { maxDepth: 1000, maxSegmentBytes: 1000, maxPathBytes: 100_000 };
      expect(resolvePath('a'.repeat(900), 'stat', wide).path.length).toBe(900);
      expect(resolvePath('d/'.repeat(900), 'stat', wide).path.split('/').length).toBe(900);
      expect(refusal('a'.repeat(900))?.code).toBe('ENAMETOOLONG');
    });

    it('agrees with a plain reference on random paths, normal ones included, near every limit', () => {
      // The reference: split, drop empty and `.` segments, pop on `..`, count UTF-8 bytes.
      function reference(input: string, limits: typeof tight): { path: string; dirOnly: boolean } | string {
        const p = input.replaceAll('\\', '/');
        if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'EPATHESCAPE';
        const out: string[] = [];
        for (const seg of p.split('/')) {
          if (seg === '' || seg === '.') continue;
          if (seg === '..') {
            if (out.length === 0) return 'EPATHESCAPE';
            out.pop();
          } else if (Buffer.byteLength(seg) > limits.maxSegmentBytes) return 'ENAMETOOLONG';
          else out.push(seg);
        }
        if (out.length > limits.maxDepth || Buffer.byteLength(out.join('/')) > limits.maxPathBytes) return 'ENAMETOOLONG';
        return { path: out.join('/'), dirOnly: p.endsWith('/') };
      }
      // Inputs built segment by segment, so normal paths near each limit are common:
      // one, two, three and four UTF-8 bytes a character, dot segments, empty
      // segments, and now and then a backslash, a colon or a leading slash.
      const alphabets = [['a', 'b', 'é', '中', '😀'], ['中'], ['a']];
      let seed = 0x2545f491;
      const random = (n: number) => {
        // xorshift32: exact in 32-bit integers, so the sequence never degenerates.
        seed ^= seed << 13;
        seed ^= seed >>> 17;
        seed ^= seed << 5;
        return (seed >>> 0) % n;
      };
      const shapes = [tight, { maxDepth: 4, maxSegmentBytes: 9, maxPathBytes: 24 }, { maxDepth: 6, maxSegmentBytes: 60, maxPathBytes: 150 }];
      // Deep rather than long: the depth limit binds before the length limits.
      shapes.push({ maxDepth: 5, maxSegmentBytes: 12, maxPathBytes: 400 });
      for (const limits of shapes) {
        for (let n = 0; n < 5000; n++) {
          const characters = alphabets[random(alphabets.length)] as string[];
          const segments: string[] = [];
          const count = 1 + random(limits.maxDepth + 2);
          for (let k = 0; k < count; k++) {
            const kind = random(20);
            if (kind === 0) segments.push('');
            else if (kind === 1) segments.push('.');
            else if (kind === 2) segments.push('..');
            else {
              let seg = '';
              const length = 1 + random(Math.ceil(limits.maxSegmentBytes / 2) + 2);
              for (let i = 0; i < length; i++) seg += characters[random(characters.length)];
              segments.push(seg);
            }
          }
          let input = segments.join('/');
          const twist = random(30);
          if (twist === 0) input = `/${input}`;
          else if (twist === 1) input = `${input}/`;
          else if (twist === 2) input = input.replace('/', '\\');
          else if (twist === 3) input = `Z:${input}`;
          const expected = reference(input, limits);
          const got = refusal(input, limits);
          if (typeof expected === 'string') expect([input, got?.code]).toEqual([input, expected]);
          else expect([input, resolvePath(input, 'stat', limits)]).toEqual([input, expected]);
        }
      }
    });

    it('limits never relax escape or character rules', () => {
      const wide = { maxDepth: 1000, maxSegmentBytes: 1000, maxPathBytes: 100_000 };
      expect(refusal('../x', wide)?.code).toBe('EPATHESCAPE');
      expect(refusal('/x', wide)?.code).toBe('EPATHESCAPE');
      expect(refusal('a\u0000', wide)?.code).toBe('EINVAL');
    });
  });
});

describe('joinPath', () => {
  it.each([
    ['', '', ''],
    ['', 'a', 'a'],
    ['a', '', 'a'],
    ['a', 'b', 'a/b'],
    ['a/b', 'c.txt', 'a/b/c.txt'],
    ['a', 'b/c', 'a/b/c'],
  ])('joinPath(%j, %j) = %j', (dir, name, expected) => {
    expect(joinPath(dir, name)).toBe(expected);
  });
});

describe('parentPath', () => {
  it.each([
    ['', ''],
    ['a', ''],
    ['a/b', 'a'],
    ['a/b/c.txt', 'a/b'],
    ['..foo/x', '..foo'],
  ])('parentPath(%j) = %j', (path, expected) => {
    expect(parentPath(path)).toBe(expected);
  });

  it('reaches the root from any depth and stays there', () => {
    let p = 'a/b/c/d';
    const seen: string[] = [];
    while (p !== '') {
      p = parentPath(p);
      seen.push(p);
    }
    expect(seen).toEqual(['a/b/c', 'a/b', 'a', '']);
    expect(parentPath(p)).toBe('');
  });
});

describe('baseName', () => {
  it.each([
    ['', ''],
    ['a', 'a'],
    ['a/b', 'b'],
    ['a/b/c.txt', 'c.txt'],
    ['x/...', '...'],
    ['dir/😀', '😀'],
  ])('baseName(%j) = %j', (path, expected) => {
    expect(baseName(path)).toBe(expected);
  });

  it('joins back with parentPath', () => {
    for (const p of ['a', 'a/b', 'a/b/c.txt', '中/文']) expect(joinPath(parentPath(p), baseName(p))).toBe(p);
  });
});

describe('isSameOrInside', () => {
  it.each([
    ['', '', true],
    ['', 'a', true],
    ['', 'a/b', true],
    ['a', 'a', true],
    ['a', 'a/b', true],
    ['a', 'a/b/c', true],
    ['a/b', 'a/b/c', true],
    ['a', 'ab', false],
    ['a', 'a.txt', false],
    ['a/b', 'a/bc', false],
    ['a/b', 'a', false],
    ['a', '', false],
    ['a', 'b/a', false],
    ['subdir', 'subdir.txt', false],
  ])('isSameOrInside(%j, %j) = %s', (ancestor, path, expected) => {
    expect(isSameOrInside(ancestor, path)).toBe(expected);
  });
});

describe('displayPath, pathSegments, describeInput', () => {
  it('displays the root as a dot', () => {
    expect(displayPath('')).toBe('.');
    expect(displayPath('a/b')).toBe('a/b');
  });

  it('splits segments; the root has none', () => {
    expect(pathSegments('')).toEqual([]);
    expect(pathSegments('a/b/c')).toEqual(['a', 'b', 'c']);
  });

  it('describes inputs for messages', () => {
    expect(describeInput('plain')).toBe('plain');
    expect(describeInput('tab\there')).toBe('tab\\there');
    expect(describeInput(null)).toBe('null');
  });
});

describe('isAddressableName', () => {
  it.each([
    'a',
    'notes.md',
    '...',
    '.hidden',
    'name with spaces',
    'q\'uote "dq" $HOME `x`',
    '-dash',
    'p|ipe',
    'x*y?[z]',
    'C:',
    'é 😀 中文',
    '\u00a0nbsp\u200b',
    '\u0080\u009f',
  ])('accepts %j', (name) => {
    expect(isAddressableName(name)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['.', 'dot'],
    ['..', 'dot-dot'],
    ['a/b', 'a slash'],
    ['new\nline', 'a newline'],
    ['tab\t', 'a tab'],
    ['\u0000', 'NUL'],
    ['\u001f', 'the last C0 control'],
    ['del\u007f', 'DEL'],
    ['a\\b', 'a backslash'],
    ['caf\ufffd', 'U+FFFD (bytes that were not UTF-8)'],
    ['\ud800x', 'a lone high surrogate'],
    ['x\udc00', 'a lone low surrogate'],
    ['\ud83d', 'a high surrogate at the end'],
  ])('refuses %j (%s)', (name) => {
    expect(isAddressableName(name)).toBe(false);
  });

  // Names built from the characters that matter (controls, separators, dots,
  // surrogate halves, U+FFFD) mixed with ordinary and astral ones; seeded, so
  // a failure repeats.
  const ALPHABET = [
    'a',
    'Z',
    '0',
    '.',
    '.',
    '-',
    ' ',
    '|',
    '*',
    ':',
    '\u00e9',
    '\u4e2d',
    '\u{1f600}',
    '\n',
    '\t',
    '\u0000',
    '\u001f',
    '\u007f',
    '\u0080',
    '\\',
    '/',
    '\ufffd',
    '\ud800',
    '\udc00',
  ];
  function randomNames(count: number, seed: number): string[] {
    let state = seed >>> 0;
    const next = (n: number) => {
      // mulberry32
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (((t ^ (t >>> 14)) >>> 0) % n) as number;
    };
    return Array.from({ length: count }, () => {
      // Up to 40 units: at most 120 UTF-8 bytes, inside the default segment limit.
      const length = next(41);
      let name = '';
      for (let i = 0; i < length; i++) name += next(4) === 0 ? (ALPHABET[next(ALPHABET.length)] as string) : String.fromCharCode(0x20 + next(0x5f));
      return name.slice(0, 40);
    });
  }

  it('every name it accepts, joined under a directory, resolvePath takes unchanged; no other reaches its entry', () => {
    const names = randomNames(20_000, 0x5eed);
    let accepted = 0;
    for (const name of names) {
      const input = `dir/sub/${name}`;
      if (isAddressableName(name)) {
        accepted++;
        expect(resolvePath(input, 'stat'), JSON.stringify(name)).toEqual({ path: input, dirOnly: false });
        continue;
      }
      // U+FFFD alone resolves: the name it stands for on disk is what a path cannot reach.
      if (name.includes('\ufffd') && isAddressableName(name.replaceAll('\ufffd', 'x'))) continue;
      const err = refusal(input);
      // Resolved, the path must name something else: another path, or more segments than dir, sub and the name.
      if (err === undefined) expect(pathSegments(resolvePath(input, 'stat').path), JSON.stringify(name)).not.toEqual(['dir', 'sub', name]);
    }
    // Both sides are exercised, not one.
    expect(accepted).toBeGreaterThan(2_000);
    expect(names.length - accepted).toBeGreaterThan(2_000);
  });
});

describe('trailingSlashError', () => {
  it('a file behind a slash is ENOTDIR; nothing there is EISDIR only for a call that makes a file; a directory is no error', () => {
    const onFile = trailingSlashError('readBytes', 'a.txt', 'file', false);
    expect(onFile?.code).toBe('ENOTDIR');
    expect(onFile?.path).toBe('a.txt/');
    expect(onFile?.hint).toBe('drop the trailing "/" to name it: a.txt');
    expect(trailingSlashError('openWrite', 'a.txt', 'file', true)?.code).toBe('ENOTDIR');
    expect(onFile?.reason).toBe('a name ending in "/" names a directory, and this is a file');
    expect(trailingSlashError('stat', 'dev', 'other', false)?.reason).toBe('a name ending in "/" names a directory, and this is not a directory');
    const fresh = trailingSlashError('openWrite', 'notes', undefined, true);
    expect(fresh?.code).toBe('EISDIR');
    expect(fresh?.hint).toBe('drop the trailing "/" to name a file: notes');
    expect(trailingSlashError('readBytes', 'notes', undefined, false)).toBeUndefined();
    expect(trailingSlashError('openWrite', 'src', 'directory', true)).toBeUndefined();
    expect(trailingSlashError('stat', 'src', 'directory', false)).toBeUndefined();
  });
});
