/**
 * A read through the context layer looks at the file once (issue #13): its
 * stat and its bytes come from one `readWithStat` of the backend, where the
 * loader asked `stat` then `readBytes` (two opens through the host's path
 * guard, about 6% of a small read's CPU) and could pair one file's stat with
 * the bytes of another that replaced it in between; an edit's read of the
 * file's text is one `readBytes`, which refuses a directory itself, where it
 * too asked `stat` first. The backends are real;
 * the wrapper only counts the protocol calls the context layer makes.
 */

import type { Filesystem } from '@ctxfs/core';
import { afterEach, describe, expect, test } from 'vitest';
import { loadFileText } from '../src/edits/file-text.ts';
import { type ContextLayer, createContext } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const FILES = {
  'src/small.ts': '/** Doubles. */\nexport function double(x: number): number {\n  return x * 2;\n}\n',
  'notes.md': '# Notes\n\none\ntwo\n',
};

/** The real filesystem, with every protocol call counted by name. */
function counted(fs: Filesystem): { fs: Filesystem; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(fs, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { fs: proxy, calls };
}

for (const backend of BACKENDS) {
  describe(`a context read over ${backend.name} looks at the file once`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    afterEach(async () => {
      await ctx.close();
      await ws.cleanup();
    });

    test.each([
      ['readFile', (c: ContextLayer) => c.readFile('src/small.ts')],
      ['readLines', (c: ContextLayer) => c.readLines('src/small.ts', 2, 3)],
      ['readFile of another file', (c: ContextLayer) => c.readFile('notes.md')],
    ] as const)('%s: one readWithStat, no stat and readBytes', async (_label, read) => {
      ws = await backend.create(FILES);
      const { fs, calls } = counted(ws.fs);
      ctx = await createContext({ fs, store: testState(), profile: 'large', agent: 'llm:test' });
      await ctx.scan();
      await read(ctx); // the first read may register the file; the steady state is what a model's reads cost
      calls.clear();
      await read(ctx);
      const reads = Object.fromEntries(['stat', 'readBytes', 'readWithStat'].map((k) => [k, calls.get(k) ?? 0]));
      expect(reads).toEqual({ stat: 0, readBytes: 0, readWithStat: 1 });
    });
  });
}

for (const backend of BACKENDS) {
  describe(`an edit's read of the file over ${backend.name}`, () => {
    let ws: Workspace | undefined;
    afterEach(async () => {
      await ws?.cleanup();
    });

    test('is one readBytes, no stat; a directory is still EISDIR with the edit hint, a missing file undefined', async () => {
      ws = await backend.create({ ...FILES, 'dir/x.txt': 'x' });
      const { fs, calls } = counted(ws.fs);
      expect((await loadFileText(fs, 'src/small.ts'))?.text).toBe(FILES['src/small.ts']);
      expect(Object.fromEntries(['stat', 'readBytes'].map((k) => [k, calls.get(k) ?? 0]))).toEqual({ stat: 0, readBytes: 1 });
      await expect(loadFileText(fs, 'dir', 'edit')).rejects.toMatchObject({ code: 'EISDIR', op: 'edit', hint: 'name a file, not a directory' });
      expect(await loadFileText(fs, 'nope.txt')).toBeUndefined();
    });
  });
}
