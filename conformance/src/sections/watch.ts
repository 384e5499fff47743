/**
 * Watching: the events every backend that declares `watch` must deliver
 * (create, modify, delete, and rename as `capabilities.watchRenames` says),
 * recursive against direct children only, nothing outside the watched path,
 * a clean close. A backend that does not declare `watch` must refuse it with
 * `EUNSUPPORTED`.
 *
 * @module
 */

import { type Filesystem, resolvePath, type WatchEvent, type Watcher } from '@ctxfs/core';
import { expect } from 'vitest';
import { itWhen, type SuiteContext } from '../context.ts';

/** Collects a watcher's events in the background, for tests to wait on. */
class Recorder {
  readonly events: WatchEvent[] = [];
  readonly done: Promise<void>;
  readonly watcher: Watcher;

  constructor(watcher: Watcher) {
    this.watcher = watcher;
    this.done = (async () => {
      for await (const event of watcher) this.events.push(event);
    })();
    // A failure shows in the assertions on `done`; never unhandled.
    this.done.catch(() => {});
  }

  /** Waits until `predicate` holds for the events so far; fails after `ms`. */
  async waitFor(predicate: (events: readonly WatchEvent[]) => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate(this.events)) {
      if (Date.now() > deadline) expect.fail(`no ${what} within ${ms} ms; events: ${JSON.stringify(this.events)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** True when an event of `type` on `path` arrived. */
  has(type: WatchEvent['type'], path: string): boolean {
    return this.events.some((e) => e.path === path && (e.type === type || (type === 'modified' && e.type === 'created')));
  }
}

async function start(fs: Filesystem, path: string, recursive: boolean): Promise<Recorder> {
  const watcher = fs.watch(path, { recursive });
  await watcher.ready;
  return new Recorder(watcher);
}

export function watchSection(ctx: SuiteContext): void {
  const watching = ctx.caps.watch && !ctx.caps.readOnly;
  // Polling backends see a change one interval later; every backend gets a generous margin.
  const wait = (ctx.caps.watchPollIntervalMs ?? 0) * 3 + 3_000;
  // How long to keep listening for an event that must not come.
  const quiet = (ctx.caps.watchPollIntervalMs ?? 0) * 2 + 150;

  itWhen(!ctx.caps.watch)('watch is refused with EUNSUPPORTED when not declared', async () => {
    const fs = await ctx.make();
    expect(() => fs.watch('')).toThrow(expect.objectContaining({ code: 'EUNSUPPORTED' }));
  });

  itWhen(ctx.caps.watch)('a path outside the root is refused before anything is watched', async () => {
    const fs = await ctx.make();
    expect(() => fs.watch('../outside')).toThrow(expect.objectContaining({ code: 'EPATHESCAPE' }));
    expect(() => fs.watch('/etc')).toThrow(expect.objectContaining({ code: 'EPATHESCAPE' }));
  });

  itWhen(ctx.caps.watch)('watching a missing path rejects ready with ENOENT, and iteration throws it', async () => {
    const fs = await ctx.make();
    const watcher = fs.watch('missing');
    await expect(watcher.ready).rejects.toMatchObject({ code: 'ENOENT' });
    const recorder = new Recorder(watcher);
    await expect(recorder.done).rejects.toMatchObject({ code: 'ENOENT' });
  });

  itWhen(watching)('delivers created, modified and deleted with root-relative paths', async () => {
    const fs = await ctx.make({ files: { 'old.txt': 'old' }, dirs: ['dir'] });
    const rec = await start(fs, '', true);
    await fs.write('new.txt', 'new');
    await rec.waitFor(() => rec.has('created', 'new.txt'), wait, 'created of new.txt');
    await fs.write('old.txt', 'changed');
    await rec.waitFor(() => rec.has('modified', 'old.txt'), wait, 'modified of old.txt');
    await fs.delete('old.txt');
    await rec.waitFor(() => rec.has('deleted', 'old.txt'), wait, 'deleted of old.txt');
    await fs.mkdir('dir/sub');
    await rec.waitFor(() => rec.has('created', 'dir/sub'), wait, 'created of dir/sub');
    for (const e of rec.events) {
      expect(resolvePath(e.path, 'watch').path).toBe(e.path);
      if (e.oldPath !== undefined) expect(resolvePath(e.oldPath, 'watch').path).toBe(e.oldPath);
    }
    await rec.watcher.close();
  });

  itWhen(watching && ctx.caps.watchRenames)('a rename is one renamed event naming the old path', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    const rec = await start(fs, '', true);
    await fs.rename('a.txt', 'b.txt');
    await rec.waitFor((es) => es.some((e) => e.type === 'renamed' && e.path === 'b.txt' && e.oldPath === 'a.txt'), wait, 'renamed a.txt → b.txt');
    await rec.watcher.close();
  });

  itWhen(watching && !ctx.caps.watchRenames)('a rename is a deleted of the old path and a created of the new', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    const rec = await start(fs, '', true);
    await fs.rename('a.txt', 'b.txt');
    await rec.waitFor(() => rec.has('deleted', 'a.txt') && rec.has('created', 'b.txt'), wait, 'deleted a.txt and created b.txt');
    expect(rec.events.some((e) => e.type === 'renamed')).toBe(false);
    await rec.watcher.close();
  });

  itWhen(watching)('recursive reports changes at any depth', async () => {
    const fs = await ctx.make({ dirs: ['a/b/c'] });
    const rec = await start(fs, '', true);
    await fs.write('a/b/c/deep.txt', 'deep');
    await rec.waitFor(() => rec.has('created', 'a/b/c/deep.txt'), wait, 'created of a/b/c/deep.txt');
    await rec.watcher.close();
  });

  itWhen(watching)('recursive also reports inside a directory created after the watch began', async () => {
    const fs = await ctx.make();
    const rec = await start(fs, '', true);
    await fs.mkdir('later');
    await rec.waitFor(() => rec.has('created', 'later'), wait, 'created of later');
    await fs.write('later/inside.txt', 'x');
    await rec.waitFor(() => rec.has('created', 'later/inside.txt'), wait, 'created of later/inside.txt');
    await rec.watcher.close();
  });

  itWhen(watching)('without recursive: direct children only, nothing from subdirectories', async () => {
    const fs = await ctx.make({ dirs: ['w/sub'] });
    const rec = await start(fs, 'w', false);
    await fs.write('w/sub/deep.txt', 'deep');
    await fs.write('w/direct.txt', 'direct');
    await rec.waitFor(() => rec.has('created', 'w/direct.txt'), wait, 'created of w/direct.txt');
    await new Promise((resolve) => setTimeout(resolve, quiet));
    expect(rec.events.filter((e) => e.path.startsWith('w/sub/'))).toEqual([]);
    await rec.watcher.close();
  });

  itWhen(watching)('nothing outside the watched directory: siblings and parents are not reported', async () => {
    const fs = await ctx.make({ dirs: ['in', 'out'] });
    const rec = await start(fs, 'in', true);
    await fs.write('out/x.txt', 'x');
    await fs.write('top.txt', 'x');
    await fs.write('in/marker.txt', 'x');
    await rec.waitFor(() => rec.has('created', 'in/marker.txt'), wait, 'created of in/marker.txt');
    await new Promise((resolve) => setTimeout(resolve, quiet));
    expect(rec.events.filter((e) => !(e.path === 'in' || e.path.startsWith('in/')))).toEqual([]);
    await rec.watcher.close();
  });

  itWhen(watching)('a watch of one file reports that file and nothing else', async () => {
    const fs = await ctx.make({ files: { 'one.txt': '1', 'two.txt': '2' } });
    const rec = await start(fs, 'one.txt', false);
    await fs.write('two.txt', 'changed');
    await fs.write('one.txt', 'changed');
    await rec.waitFor(() => rec.has('modified', 'one.txt'), wait, 'modified of one.txt');
    await new Promise((resolve) => setTimeout(resolve, quiet));
    expect(rec.events.every((e) => e.path === 'one.txt')).toBe(true);
    await rec.watcher.close();
  });

  itWhen(watching)('with a debounce window, a burst of writes to one file is coalesced into fewer events', async () => {
    const fs = await ctx.make({ files: { 'hot.txt': '0' } });
    const watcher = fs.watch('', { recursive: true, debounceMs: 100 });
    await watcher.ready;
    const rec = new Recorder(watcher);
    for (let i = 1; i <= 20; i++) await fs.write('hot.txt', String(i));
    await fs.write('end.txt', 'x');
    await rec.waitFor(() => rec.has('created', 'end.txt'), wait, 'created of end.txt');
    const hot = rec.events.filter((e) => e.path === 'hot.txt');
    expect(hot.length).toBeGreaterThan(0);
    expect(hot.length).toBeLessThan(20);
    await rec.watcher.close();
  });

  itWhen(ctx.caps.watch)('close ends the iteration, is idempotent, and later changes are not reported', async () => {
    const fs = await ctx.make();
    const rec = await start(fs, '', true);
    await rec.watcher.close();
    await rec.done;
    await rec.watcher.close();
    if (!ctx.caps.readOnly) await fs.write('after.txt', 'x');
    await new Promise((resolve) => setTimeout(resolve, quiet));
    expect(rec.events).toEqual([]);
  });

  itWhen(ctx.caps.watch)('an aborted signal closes the watcher', async () => {
    const fs = await ctx.make();
    const controller = new AbortController();
    const watcher = fs.watch('', { signal: controller.signal });
    await watcher.ready;
    const rec = new Recorder(watcher);
    controller.abort();
    await rec.done;
  });

  itWhen(ctx.caps.watch)('closing the filesystem ends its watchers', async () => {
    const fs = await ctx.make();
    const rec = await start(fs, '', true);
    await fs.close();
    await rec.done;
  });

  itWhen(ctx.caps.watch)('breaking out of the loop closes the watcher', async () => {
    const fs = await ctx.make({ files: { 'a.txt': 'a' } });
    const watcher = fs.watch('', { recursive: true });
    await watcher.ready;
    if (!ctx.caps.readOnly) {
      const first = (async () => {
        for await (const event of watcher) return event;
        return undefined;
      })();
      await fs.write('a.txt', 'b');
      expect(await first).toMatchObject({ path: 'a.txt' });
    } else {
      await watcher.close();
    }
    // After the loop's return the watcher is closed: a new iteration ends at once.
    for await (const _ of watcher) expect.fail('the watcher should be closed');
  });

  itWhen(ctx.caps.watch)('bad options are EINVAL', async () => {
    const fs = await ctx.make();
    expect(() => fs.watch('', { recursive: 'yes' as unknown as boolean })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => fs.watch('', { debounceMs: -1 })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => fs.watch('', { maxPending: 0 })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
}
