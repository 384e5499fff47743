import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellArgument, shellQuote } from '../src/index.ts';

/** What a real POSIX shell makes of `words`: each argument it passes to printf, NUL-separated. */
function shellReads(words: string): string[] {
  const out = execFileSync('sh', ['-c', `printf '%s\\0' ${words}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

const HOSTILE = [
  "it's",
  "'",
  "''",
  '',
  ' ',
  'a b',
  '$(touch /tmp/x)',
  '`id`',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's expansion is the hostile input here
  '${HOME}',
  'a;b',
  'a|b',
  'a&b',
  '*',
  '?',
  '~',
  'a\nb',
  '"q"',
  '\\',
  '-rf',
  'x=1',
  '{"path":"a b"}',
];

describe('shell quoting', () => {
  it('every hostile string reaches the shell as itself, one word, quoted or bare', () => {
    expect(shellReads(HOSTILE.map(shellQuote).join(' '))).toEqual(HOSTILE);
    expect(shellReads(HOSTILE.map(shellArgument).join(' '))).toEqual(HOSTILE);
  });

  it('every ASCII character but NUL, alone and beside a quote, round-trips through sh, as do non-ASCII words', () => {
    const chars = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1));
    const words = [...chars, ...chars.map((c) => `'${c}'`), ...chars.map((c) => `a${c}b`), 'ünï cödé', '日本語 パス', '🙂\t\r'];
    expect(shellReads(words.map(shellArgument).join(' '))).toEqual(words);
  });

  it('leaves a plain argument bare and quotes the rest, an assignment-looking word included', () => {
    expect(shellArgument('src/a.ts')).toBe('src/a.ts');
    expect(shellArgument('x=1')).toBe("'x=1'");
    expect(shellArgument('')).toBe("''");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it('refuses a NUL, which no shell word can hold', () => {
    expect(() => shellQuote('a\0b')).toThrow(/NUL/);
    expect(() => shellArgument('a\0b')).toThrow(/NUL/);
  });
});
