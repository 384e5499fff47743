/**
 * What an undo reads: the file's history once, under the file's lock (a
 * rename's undo, which needs the other path's lock too, once more under
 * both), and each of its versions a bounded number of times — not once per
 * undo in it. Counted through a wrapper of the version store, never timed.
 */
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext, type FileVersion } from '../src/index.ts';

const LINES = `${Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n')}\n`;

const opened: ContextLayer[] = [];
afterEach(async () => {
  for (const ctx of opened.splice(0)) await ctx.close();
});

async function open(files: Record<string, string>): Promise<ContextLayer> {
  const ctx = await createContext({ fs: new MemoryFilesystem({ files }), store: ':memory:', agent: 'llm:a', safety: { policyFiles: false } });
  opened.push(ctx);
  return ctx;
}

/**
 * Counts, from now on, the history lists `ctx` reads of each path and the
 * reads of their versions (an element of a listed history read).
 */
function countReads(ctx: ContextLayer): { lists: Map<string, number>; versionReads: () => number } {
  const lists = new Map<string, number>();
  let versionReads = 0;
  const versions = ctx.versions;
  const list = versions.list.bind(versions);
  versions.list = async (path, limit, beforeSeq) => {
    lists.set(path, (lists.get(path) ?? 0) + 1);
    const history = await list(path, limit, beforeSeq);
    return new Proxy(history, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) versionReads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    }) as FileVersion[];
  };
  return { lists, versionReads: () => versionReads };
}

describe('the cost of an undo', () => {
  it('reads the history of the file once, and each version a few times however many undos the history holds', async () => {
    const ctx = await open({ 'a.txt': LINES });
    // A history of edits and their undos, then one edit more: 2 × CYCLES + 2 versions, CYCLES of them undos.
    const CYCLES = 150;
    for (let i = 0; i < CYCLES; i++) {
      expect((await ctx.replace('a.txt', 'l3\n', `E${i}\n`)).success).toBe(true);
      expect((await ctx.undo('a.txt')).success).toBe(true);
    }
    expect((await ctx.replace('a.txt', 'l5\n', 'LAST\n')).success).toBe(true);
    const length = 2 * CYCLES + 2;
    expect(await ctx.versions.count('a.txt')).toBe(length);

    const reads = countReads(ctx);
    const r = await ctx.undo('a.txt');
    expect(r.success, r.message).toBe(true);
    expect(reads.lists.get('a.txt')).toBe(1);
    // Scanning the history again for each undo in it read 205,514 versions here (757 now).
    expect(reads.versionReads()).toBeLessThan(10 * length);
    expect(new TextDecoder().decode(await ctx.fs.readBytes('a.txt'))).toBe(LINES);

    // Nothing of the agent's is left: the refusal, found from the same single read.
    const again = countReads(ctx);
    expect((await ctx.undo('a.txt')).code).toBe('ENOENT');
    expect(again.lists.get('a.txt')).toBe(1);
    expect(again.versionReads()).toBeLessThan(10 * length);
  });

  it("reads a rename's history again only once it holds both paths' locks", async () => {
    const ctx = await open({ 'a.txt': LINES });
    expect((await ctx.renameFile('a.txt', 'b.txt')).success).toBe(true);
    const reads = countReads(ctx);
    const r = await ctx.undo('b.txt');
    expect(r.success, r.message).toBe(true);
    // Under b.txt's lock alone, then under both: each read where the undo decides on it.
    expect(reads.lists.get('b.txt')).toBe(2);
    expect(reads.lists.get('a.txt')).toBe(1);
    expect(new TextDecoder().decode(await ctx.fs.readBytes('a.txt'))).toBe(LINES);
    expect(await ctx.fs.exists('b.txt')).toBe(false);
  });
});
