/**
 * What tree-sitter is not asked to outline, because its walk (about 20 µs
 * a definition, on the main thread) would hold every other caller of the
 * process: minified code, and files over 4 MiB, which the regex fallback
 * outlines. On real files: jschardet's minified bundle and TypeScript's
 * 9 MB compiler, as published on npm.
 */
import { MemoryFilesystem } from '@ctxfs/memory';
import { beforeAll, describe, expect, test } from 'vitest';
import { createContext } from '../src/index.ts';
import { npmPackage, packageFiles } from './support/npm-package.ts';
import { testState } from './support/test-state.ts';

let files: Record<string, string>;
beforeAll(() => {
  files = {
    ...packageFiles(npmPackage('jschardet', '4.0.0'), (p) => p === 'dist/jschardet.min.js', 4 * 1024 * 1024),
    ...packageFiles(npmPackage('typescript', '5.9.3'), (p) => p === 'lib/typescript.js', 16 * 1024 * 1024),
  };
  // The compiler's first 4,000 lines: the same code under the cap.
  files['part.js'] = `${(files['lib/typescript.js'] ?? '').split('\n').slice(0, 4000).join('\n')}\n`;
}, 120_000);

describe('outlines tree-sitter is spared', () => {
  test('minified code is not outlined, and says so; a file over 4 MiB is outlined by the regex fallback; others by tree-sitter', {
    timeout: 120_000,
  }, async () => {
    expect(Object.keys(files).sort()).toEqual(['dist/jschardet.min.js', 'lib/typescript.js', 'part.js']);
    const fs = new MemoryFilesystem({ files });
    const ctx = await createContext({ fs, store: testState(), profile: 'large' });
    try {
      const min = (await ctx.getOutline('dist/jschardet.min.js')).text;
      expect(min).toMatch(/: 2[0-9] lines, \d+ tokens, javascript; minified code, not outlined \(its names are mangled\)\n\(no symbols found\)/);
      const big = (await ctx.getOutline('lib/typescript.js')).text;
      expect(big).toContain('symbols by regex');
      expect(big).toMatch(/function createSourceFile\(/);
      expect((await ctx.getOutline('part.js')).text).toContain('symbols by tree-sitter');
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});
