import { createWatcher, EventCoalescer, inWatchScope, type WatchEvent, type WatchSink } from '@ctxfs/core';
import { describe, expect, it } from 'vitest';

function coalesce(events: WatchEvent[]): WatchEvent[] {
  const c = new EventCoalescer();
  for (const e of events) c.add(e);
  return c.take();
}

describe('EventCoalescer', () => {
  it('created then modified is created; created then deleted is nothing', () => {
    expect(
      coalesce([
        { type: 'created', path: 'a' },
        { type: 'modified', path: 'a' },
      ]),
    ).toEqual([{ type: 'created', path: 'a' }]);
    expect(
      coalesce([
        { type: 'created', path: 'a' },
        { type: 'deleted', path: 'a' },
      ]),
    ).toEqual([]);
  });

  it('deleted then created of the same kind is modified (an atomic save); of another kind both stay', () => {
    expect(
      coalesce([
        { type: 'deleted', path: 'a', kind: 'file' },
        { type: 'created', path: 'a', kind: 'file' },
      ]),
    ).toEqual([{ type: 'modified', path: 'a', kind: 'file' }]);
    expect(
      coalesce([
        { type: 'deleted', path: 'a', kind: 'file' },
        { type: 'created', path: 'a', kind: 'directory' },
      ]),
    ).toEqual([
      { type: 'deleted', path: 'a', kind: 'file' },
      { type: 'created', path: 'a', kind: 'directory' },
    ]);
  });

  it('a rename of a just-created file is a created of the new name; a change before a rename follows it', () => {
    expect(
      coalesce([
        { type: 'created', path: 'a' },
        { type: 'renamed', path: 'b', oldPath: 'a' },
      ]),
    ).toEqual([{ type: 'created', path: 'b' }]);
    expect(
      coalesce([
        { type: 'modified', path: 'a' },
        { type: 'renamed', path: 'b', oldPath: 'a' },
      ]),
    ).toEqual([
      { type: 'renamed', path: 'b', oldPath: 'a' },
      { type: 'modified', path: 'b' },
    ]);
  });

  it('keeps paths in the order of their first event and counts what it holds', () => {
    const c = new EventCoalescer();
    c.add({ type: 'modified', path: 'x' });
    c.add({ type: 'created', path: 'y' });
    c.add({ type: 'modified', path: 'x' });
    expect(c.size).toBe(2);
    expect(c.take().map((e) => e.path)).toEqual(['x', 'y']);
    expect(c.size).toBe(0);
  });
});

describe('inWatchScope', () => {
  it('recursive takes any depth below; otherwise the path and its direct children', () => {
    expect(inWatchScope({ path: 'src', kind: 'directory', recursive: true }, 'src/a/b.ts')).toBe(true);
    expect(inWatchScope({ path: 'src', kind: 'directory', recursive: false }, 'src/a/b.ts')).toBe(false);
    expect(inWatchScope({ path: 'src', kind: 'directory', recursive: false }, 'src/a')).toBe(true);
    expect(inWatchScope({ path: 'src', kind: 'directory', recursive: true }, 'srcx/a')).toBe(false);
    expect(inWatchScope({ path: 'f.txt', kind: 'file', recursive: false }, 'f.txt')).toBe(true);
  });
});

/** A watcher over a sink the test drives by hand. */
async function manual(options: Parameters<typeof createWatcher>[2] = {}) {
  let sink: WatchSink | undefined;
  let stops = 0;
  const watcher = createWatcher(
    { path: '', kind: 'directory', recursive: true },
    async (s) => {
      sink = s;
      return () => {
        stops++;
      };
    },
    options,
  );
  await watcher.ready;
  if (sink === undefined) throw new Error('not started');
  return { watcher, sink, stops: () => stops };
}

async function take(iterator: AsyncIterator<WatchEvent>, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  while (out.length < n) {
    const r = await iterator.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe('createWatcher', () => {
  it('drops unaddressable names and ignored paths, and delivers the rest after the debounce', async () => {
    const { watcher, sink } = await manual({ debounceMs: 5, ignore: (p) => p.includes('.ctxfs-tmp-') });
    sink.emit({ type: 'created', path: 'bad\nname' });
    sink.emit({ type: 'created', path: 'dir/.ctxfs-tmp-1-ab' });
    sink.emit({ type: 'created', path: 'ok.txt' });
    const it = watcher[Symbol.asyncIterator]();
    expect(await take(it, 1)).toEqual([{ type: 'created', path: 'ok.txt' }]);
    await watcher.close();
  });

  it('past maxPending it drops what it holds for one modified of the watched path (rescan)', async () => {
    const { watcher, sink } = await manual({ debounceMs: 5, maxPending: 10 });
    for (let i = 0; i < 50; i++) sink.emit({ type: 'created', path: `f${i}` });
    const it = watcher[Symbol.asyncIterator]();
    expect(await take(it, 1)).toEqual([{ type: 'modified', path: '' }]);
    sink.emit({ type: 'created', path: 'after' });
    expect(await take(it, 1)).toEqual([{ type: 'created', path: 'after' }]);
    await watcher.close();
  });

  it('a rename across the scope edge becomes a created or a deleted', async () => {
    let sink: WatchSink | undefined;
    const watcher = createWatcher(
      { path: 'in', kind: 'directory', recursive: true },
      async (s) => {
        sink = s;
        return () => {};
      },
      { debounceMs: 0 },
    );
    await watcher.ready;
    sink?.emit({ type: 'renamed', path: 'in/a', oldPath: 'out/a' });
    sink?.emit({ type: 'renamed', path: 'out/b', oldPath: 'in/b' });
    expect(await take(watcher[Symbol.asyncIterator](), 2)).toEqual([
      { type: 'created', path: 'in/a' },
      { type: 'deleted', path: 'in/b' },
    ]);
    await watcher.close();
  });

  it('a backend failure ends the iteration with an FsError after the events already held; the backend is stopped once', async () => {
    const { watcher, sink, stops } = await manual({ debounceMs: 50 });
    sink.emit({ type: 'created', path: 'a' });
    sink.fail(Object.assign(new Error('engine gone'), { code: 'EUNAVAILABLE' }));
    const it = watcher[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ done: false, value: { type: 'created', path: 'a' } });
    await expect(it.next()).rejects.toMatchObject({ code: 'EUNAVAILABLE', op: 'watch' });
    await watcher.close();
    expect(stops()).toBe(1);
  });

  it('close stops the backend once and ends a pending next()', async () => {
    const { watcher, stops } = await manual();
    const it = watcher[Symbol.asyncIterator]();
    const pending = it.next();
    await watcher.close();
    await watcher.close();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(stops()).toBe(1);
  });

  it('a start that fails rejects ready with an FsError and the iteration throws it', async () => {
    const watcher = createWatcher({ path: 'x', kind: 'directory', recursive: false }, async () => {
      throw Object.assign(new Error('no such dir'), { code: 'ENOENT' });
    });
    await expect(watcher.ready).rejects.toMatchObject({ code: 'ENOENT', path: 'x' });
    await expect(watcher[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('diffPictures', () => {
  it('reports what appeared, what vanished (children first) and files whose signature changed; directories only appear and vanish', async () => {
    const { diffPictures } = await import('@ctxfs/core');
    const before = new Map([
      ['d', { kind: 'directory' as const, signature: '1' }],
      ['d/x', { kind: 'file' as const, signature: '1' }],
      ['keep', { kind: 'file' as const, signature: '1' }],
      ['dir2', { kind: 'directory' as const, signature: '1' }],
    ]);
    const after = new Map([
      ['keep', { kind: 'file' as const, signature: '2' }],
      ['dir2', { kind: 'directory' as const, signature: '9' }],
      ['new', { kind: 'file' as const, signature: '1' }],
    ]);
    const events: WatchEvent[] = [];
    diffPictures(before, after, { emit: (e) => events.push(e) });
    expect(events).toEqual([
      { type: 'deleted', path: 'd/x', kind: 'file' },
      { type: 'deleted', path: 'd', kind: 'directory' },
      { type: 'modified', path: 'keep', kind: 'file' },
      { type: 'created', path: 'new', kind: 'file' },
    ]);
  });
});

describe('EventCoalescer: chains of renames', () => {
  it('a→b then b→c is one rename a→c; a→b→a is a modified of a; a change on the way follows the file', () => {
    expect(
      coalesce([
        { type: 'renamed', path: 'b', oldPath: 'a' },
        { type: 'renamed', path: 'c', oldPath: 'b' },
      ]),
    ).toEqual([{ type: 'renamed', path: 'c', oldPath: 'a' }]);
    expect(
      coalesce([
        { type: 'renamed', path: 'b', oldPath: 'a' },
        { type: 'renamed', path: 'a', oldPath: 'b' },
      ]),
    ).toEqual([{ type: 'modified', path: 'a' }]);
    expect(
      coalesce([
        { type: 'renamed', path: 'b', oldPath: 'a' },
        { type: 'modified', path: 'b' },
        { type: 'renamed', path: 'c', oldPath: 'b' },
      ]),
    ).toEqual([
      { type: 'renamed', path: 'c', oldPath: 'a' },
      { type: 'modified', path: 'c' },
    ]);
  });
});
