/**
 * grep's `exclude`: names left out at any depth — a directory so named is
 * neither searched nor entered, a file so named is not searched — matched
 * literally, combined with `glob`, `dot` and a scope, as a walk's `exclude`.
 *
 * @module
 */

import type { GrepOptions } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';
import { collect, type SuiteContext } from '../context.ts';

const TREE: Record<string, string> = {
  'index.js': 'needle\n',
  'node_modules/dep/index.js': 'needle\n',
  'packages/app/node_modules/dep/x.js': 'needle\n',
  'packages/app/src/main.js': 'needle\n',
  'packages/app/src/node_modules': 'needle (a file of that name)\n',
  '.git/config': 'needle\n',
  '.github/ci.yml': 'needle\n',
  'x*y/a.txt': 'needle\n',
  'xay/a.txt': 'needle\n',
};

export function grepExcludeSection(ctx: SuiteContext): void {
  const paths = async (options: GrepOptions) => {
    const fs = await ctx.make({ files: TREE });
    return (await collect(fs.grep('needle', options))).map((m) => m.path);
  };

  describe('exclude', () => {
    it('leaves out directories and files of the given names at every depth', async () => {
      expect(await paths({ exclude: ['node_modules'] })).toEqual(['index.js', 'packages/app/src/main.js', 'x*y/a.txt', 'xay/a.txt']);
    });

    it('with dot, an excluded dot directory stays out and the other dot directories are searched', async () => {
      expect(await paths({ exclude: ['node_modules', '.git'], dot: true })).toEqual([
        '.github/ci.yml',
        'index.js',
        'packages/app/src/main.js',
        'x*y/a.txt',
        'xay/a.txt',
      ]);
    });

    it('names are literal, never patterns', async () => {
      expect(await paths({ exclude: ['x*y', 'node_modules'] })).toEqual(['index.js', 'packages/app/src/main.js', 'xay/a.txt']);
      expect(await paths({ exclude: ['*'] })).toContain('index.js');
    });

    it('applies below a scope and together with glob', async () => {
      expect(await paths({ exclude: ['node_modules'], path: 'packages' })).toEqual(['packages/app/src/main.js']);
      expect(await paths({ exclude: ['node_modules'], glob: '*.js' })).toEqual(['index.js', 'packages/app/src/main.js']);
    });

    it('an empty list excludes nothing', async () => {
      expect((await paths({ exclude: [] })).length).toBe((await paths({})).length);
      expect(await paths({})).toContain('node_modules/dep/index.js');
    });
  });
}
