import type { WatchEvent, Watcher } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, it } from 'vitest';

/** The next `n` events of `watcher`. */
async function next(watcher: Watcher, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  const it = watcher[Symbol.asyncIterator]();
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe('memory watch', () => {
  it('a recursive delete names every entry it removed, children before their directory', async () => {
    const fs = new MemoryFilesystem({ files: { 'd/a.txt': 'a', 'd/sub/b.txt': 'b' } });
    const watcher = fs.watch('', { recursive: true });
    await watcher.ready;
    await fs.delete('d', { recursive: true });
    const events = await next(watcher, 4);
    expect(events.map((e) => `${e.type} ${e.path}`).sort()).toEqual(['deleted d', 'deleted d/a.txt', 'deleted d/sub', 'deleted d/sub/b.txt']);
    expect(events.at(-1)).toEqual({ type: 'deleted', path: 'd', kind: 'directory' });
    expect(events.findIndex((e) => e.path === 'd/sub/b.txt')).toBeLessThan(events.findIndex((e) => e.path === 'd/sub'));
    await fs.close();
  });

  it('restoring a snapshot tells every watcher to rescan (one modified of the watched path)', async () => {
    const fs = new MemoryFilesystem({ files: { 'src/a.ts': 'a' } });
    const snap = await fs.snapshot();
    const watcher = fs.watch('src', { recursive: true });
    await watcher.ready;
    await fs.restore(snap);
    expect(await next(watcher, 1)).toEqual([{ type: 'modified', path: 'src' }]);
    await fs.close();
  });

  it('a recursive copy reports what it created, with kinds', async () => {
    const fs = new MemoryFilesystem({ files: { 'from/x.txt': 'x' } });
    const watcher = fs.watch('', { recursive: true });
    await watcher.ready;
    await fs.copy('from', 'to', { recursive: true });
    expect(await next(watcher, 2)).toEqual([
      { type: 'created', path: 'to', kind: 'directory' },
      { type: 'created', path: 'to/x.txt', kind: 'file' },
    ]);
    await fs.close();
  });

  it('a write then a rename within the debounce window is one created of the new name', async () => {
    const fs = new MemoryFilesystem();
    const watcher = fs.watch('', { recursive: true, debounceMs: 50 });
    await watcher.ready;
    await fs.write('draft.txt', 'x');
    await fs.rename('draft.txt', 'final.txt');
    expect(await next(watcher, 1)).toEqual([{ type: 'created', path: 'final.txt', kind: 'file' }]);
    await fs.close();
  });
});
