import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, it } from 'vitest';
import { createContext, o200kTokenizer } from '../src/index.ts';
import { testState } from './support/test-state.ts';

// Real files nobody here wrote: Node's type declarations.
const TYPES = realpathSync(join(import.meta.dirname, '../../../node_modules/@types/node'));
const FS_DTS = readFileSync(join(TYPES, 'fs.d.ts'), 'utf8');
const LINES = FS_DTS.split('\n');

async function session(files: Record<string, string>) {
  const fs = new MemoryFilesystem({ files });
  const ctx = await createContext({ fs, store: testState(), agent: 'llm:a' });
  const small = ctx.session({ agent: 'llm:small', profile: 'small' });
  return { ctx, small };
}

/** A hunk replacing lines `from`..`to` (1-based) whose old side is `old`. */
function hunk(path: string, from: number, old: readonly string[], added: readonly string[]): string {
  return [
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${from},${old.length} +${from},${added.length} @@`,
    ...old.map((l) => `-${l}`),
    ...added.map((l) => `+${l}`),
    '',
  ].join('\n');
}

describe('a refusal fits the smallest profile, whatever the patch', () => {
  it('a 2,500-line hunk that differs in three lines shows those lines, not the region', async () => {
    const { ctx, small } = await session({ 'fs.d.ts': FS_DTS });
    try {
      await small.readLines('fs.d.ts', 1, 5);
      const old = LINES.slice(99, 2599).map((l, i) => (i === 700 || i === 1400 || i === 2100 ? `${l} // edited elsewhere` : l));
      const r = await small.applyPatch(hunk('fs.d.ts', 100, old, ['// replaced']));
      expect(r.success).toBe(false);
      expect(r.message.length).toBeLessThan(4000);
      expect(o200kTokenizer.count(r.message)).toBeLessThan(1500);
      expect(r.message).toContain('2,497 of 2,500 lines match');
      for (const line of [800, 1500, 2200]) expect(r.message).toContain(`${line}\t! expected`);
    } finally {
      await ctx.close();
    }
  });

  it('a one-line file names the column where the hunk parts from it', async () => {
    const minified = LINES.map((l) => l.trim()).join(' ');
    const { ctx, small } = await session({ 'bundle.min.js': `${minified}\n` });
    try {
      await small.readLines('bundle.min.js', 1, 1);
      const at = Math.floor(minified.length / 2);
      const wrong = `${minified.slice(0, at)}XYZ${minified.slice(at + 3)}`;
      const r = await small.applyPatch(hunk('bundle.min.js', 1, [wrong], ['x']));
      expect(r.success).toBe(false);
      expect(r.message).not.toContain('No region of the file resembles it');
      expect(r.message).toContain(`differs at column ${at + 1}`);
      expect(r.message.length).toBeLessThan(4000);
    } finally {
      await ctx.close();
    }
  });

  it('forty refused hunks are named after the first few, within the limit', async () => {
    const { ctx, small } = await session({ 'fs.d.ts': FS_DTS });
    try {
      await small.readLines('fs.d.ts', 1, 5);
      const parts = [`--- a/fs.d.ts`, `+++ b/fs.d.ts`];
      for (let k = 0; k < 40; k++) {
        const from = 50 + k * 100;
        const old = LINES.slice(from - 1, from + 29).map((l, i) => (i === 15 ? `${l} /* not in the file */` : l));
        parts.push(`@@ -${from},30 +${from},1 @@`, ...old.map((l) => `-${l}`), '+// replaced');
      }
      const r = await small.applyPatch(`${parts.join('\n')}\n`);
      expect(r.success).toBe(false);
      expect(r.message.length).toBeLessThan(6000);
      expect(r.message).toMatch(/\d+ more hunks? refused \(#\d+/);
      expect(r.message).toContain('40 of 40 hunks refused');
    } finally {
      await ctx.close();
    }
  });
});
