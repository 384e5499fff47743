/**
 * An empty grep of a directory says what the ignore rules left out, with the
 * call that searches it too, only when something ignored lies within the
 * directory searched: naming `.git, node_modules` for a `lib` that holds
 * neither sends a model to repeat the search with `includeIgnored` for
 * nothing.
 */
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, test } from 'vitest';
import { createContext } from '../src/index.ts';
import { testState } from './support/test-state.ts';

const FILES: Record<string, string> = {
  '.gitignore': 'build\n',
  '.git/HEAD': 'ref: refs/heads/main\n',
  'node_modules/dep/index.js': 'module.exports = 1;\n',
  'lib/view.js': 'export function view() {}\n',
  'lib/parts/part.js': 'export const part = 1;\n',
  'app/main.js': 'import "./x";\n',
  'app/node_modules/local/index.js': 'module.exports = 2;\n',
  'app/build/out.js': 'compiled\n',
};

async function withContext(run: (ctx: Awaited<ReturnType<typeof createContext>>) => Promise<void>): Promise<void> {
  const fs = new MemoryFilesystem({ files: FILES });
  const ctx = await createContext({ fs, store: testState(), profile: 'large', agent: 'llm:test', safety: { policyFiles: false } });
  try {
    await ctx.scan();
    await run(ctx);
  } finally {
    await ctx.close();
    await fs.close();
  }
}

describe('the note on what an empty grep did not search', () => {
  test('is left out where nothing ignored lies within the directory searched', async () => {
    await withContext(async (ctx) => {
      const r = await ctx.grep('no-such-text-anywhere', { path: 'lib' });
      expect(r.counts.total).toBe(0);
      expect(r.text).not.toContain('not searched');
      expect(r.text).not.toContain('includeIgnored');
    });
  });

  test('names only the ignored names that lie within the directory searched, and its call finds what they hold', async () => {
    await withContext(async (ctx) => {
      const app = await ctx.grep('module.exports = 2', { path: 'app' });
      expect(app.counts.total).toBe(0);
      expect(app.text).toMatch(/\[not searched: ignored (build, node_modules|node_modules, build);/);
      expect(app.text).not.toContain('.git');
      expect(app.text).toContain('grep("module.exports = 2", {path: "app", includeIgnored: true})');
      const again = await ctx.grep('module.exports = 2', { path: 'app', includeIgnored: true });
      expect(again.counts.total).toBe(1);

      const root = await ctx.grep('no-such-text-anywhere');
      expect(root.text).toContain('[not searched: ignored ');
      for (const name of ['.git', 'node_modules', 'build']) expect(root.text).toContain(name);
    });
  });
});

describe('the lookup behind the note', () => {
  test('reads a bounded part of the tree however much the search walked, nearest first', async () => {
    // 100 packages of 40 directories each: 4,000 directories the grep walks, a node_modules in the first package.
    const files: Record<string, string> = { 'packages/p000/node_modules/dep/index.js': 'module.exports = 1;\n' };
    for (let p = 0; p < 100; p++) for (let d = 0; d < 40; d++) files[`packages/p${String(p).padStart(3, '0')}/src/d${d}/f.js`] = `export const v = ${d};\n`;
    const fs = new MemoryFilesystem({ files });
    // The real backend, what its globs yield counted: the note's lookup reads directories through glob.
    let yielded = 0;
    const glob = fs.glob.bind(fs);
    fs.glob = (pattern, options) => {
      const inner = glob(pattern, options);
      return (async function* () {
        for await (const m of inner) {
          yielded++;
          yield m;
        }
      })() as ReturnType<typeof fs.glob>;
    };
    const ctx = await createContext({ fs, store: testState(), profile: 'large', agent: 'llm:test', safety: { policyFiles: false } });
    try {
      const r = await ctx.grep('no-such-text-anywhere');
      expect(r.counts.total).toBe(0);
      expect(r.text).toContain('[not searched: ignored node_modules;');
      // The tree holds 8,204 entries; a second walk of it yielded them all.
      expect(yielded).toBeLessThanOrEqual(2_001);
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});
