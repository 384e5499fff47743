/**
 * A pattern written in grep's basic syntax (`a\|b`, `x\+`) matches nothing
 * in RE2's, where those are the characters themselves: a model used to
 * `grep` then sees "no matches" for text that is there. The result names the
 * pattern in RE2's syntax as a call, and the conversion is checked against
 * GNU grep itself (basic against extended) on real sources (semver's).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext } from '../src/index.ts';
import { fromBasicSyntax } from '../src/search/grep.ts';
import { npmPackage, packageFiles } from './support/npm-package.ts';
import { testState } from './support/test-state.ts';

describe("grep's basic syntax", () => {
  test('is written in RE2 syntax only when it uses an operator basic syntax alone spells with a backslash', () => {
    expect(fromBasicSyntax('alpha\\|beta')).toBe('alpha|beta');
    expect(fromBasicSyntax('x\\+')).toBe('x+');
    expect(fromBasicSyntax('colou\\?r')).toBe('colou?r');
    expect(fromBasicSyntax('\\(ab\\)\\+')).toBe('(ab)+');
    // Bare characters are literals in basic syntax, so they are escaped in RE2's.
    expect(fromBasicSyntax('f(x)\\|g{2}')).toBe('f\\(x\\)|g\\{2\\}');
    expect(fromBasicSyntax('a\\{2\\}\\|b')).toBe('a{2}|b');
    // Bracket expressions read alike in both, a leading ] included.
    expect(fromBasicSyntax('[|+(]x\\+')).toBe('[|+(]x+');
    expect(fromBasicSyntax('[]|]\\|y')).toBe('[]|]|y');
    expect(fromBasicSyntax('[^]|]\\|y')).toBe('[^]|]|y');
    expect(fromBasicSyntax('\\.\\|\\*')).toBe('\\.|\\*');
    // Nothing says basic syntax was meant: a \( alone is as likely a literal parenthesis.
    expect(fromBasicSyntax('foo\\(')).toBeUndefined();
    expect(fromBasicSyntax('a|b')).toBeUndefined();
    expect(fromBasicSyntax('plain')).toBeUndefined();
  });

  test('what GNU grep matches with the basic pattern, grep -E matches with the one written for RE2, on real sources', () => {
    const dir = join(npmPackage('semver', '7.6.0'), 'classes');
    const patterns = [
      'satisfies\\|intersects',
      'this\\.\\(major\\|minor\\)\\+',
      'if (\\(this\\|other\\)',
      'throw\\|return\\{1\\}',
      '[(]options\\|loose\\?',
      'comp\\(are\\)\\?Main',
      '\\(=\\)\\{2,3\\}\\|!==\\?',
    ];
    let matched = 0;
    for (const basic of patterns) {
      const extended = fromBasicSyntax(basic);
      expect(extended, basic).toBeDefined();
      const count = (args: string[]): string => {
        try {
          return execFileSync('grep', [...args, '-rhn', '--', dir], { encoding: 'utf8' });
        } catch (err) {
          // grep exits 1 when nothing matches.
          if ((err as { status?: number }).status === 1) return '';
          throw err;
        }
      };
      const byBasic = count(['-e', basic]);
      expect(count(['-E', '-e', extended as string]), basic).toBe(byBasic);
      matched += byBasic.split('\n').filter(Boolean).length;
    }
    expect(matched).toBeGreaterThan(50);
  });

  test('a search in basic syntax that finds nothing names the call in RE2 syntax, which finds the lines', async () => {
    const files = packageFiles(npmPackage('semver', '7.6.0'));
    const fs = new MemoryFilesystem({ files });
    const ctx = await createContext({ fs, store: testState(), profile: 'large', agent: 'llm:test', safety: { policyFiles: false } });
    try {
      await ctx.scan();
      const none = await ctx.grep('satisfies\\|intersects', { path: 'classes', output: 'files' });
      expect(none.counts.total).toBe(0);
      expect(none.text).toContain('grep("satisfies|intersects", {path: "classes", output: "files"})');
      const found = await ctx.grep('satisfies|intersects', { path: 'classes', output: 'files' });
      expect(found.counts.total).toBeGreaterThan(0);
      // Literal text, or a pattern with no basic-syntax operator, gets no such note.
      expect((await ctx.grep('satisfies\\|intersects', { literal: true })).text).not.toContain("grep's basic syntax");
      expect((await ctx.grep('no-such-text\\(', { path: 'classes' })).text).not.toContain("grep's basic syntax");
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});
