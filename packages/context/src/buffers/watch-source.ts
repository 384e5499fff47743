/**
 * The source for a backend with `capabilities.watch`: one recursive watcher
 * on the workspace, fanned out to one feed per session; a buffer call looks
 * only at the paths an event named. The watch types are declared here by
 * shape (they match `Filesystem.watch` in `@ctxfs/core` once that lands),
 * so this module depends on nothing else. Late or lost events cost nothing
 * in safety: a feed's first answer names every path (anything before the
 * watcher was ready), a watcher that fails turns every feed into a look at
 * every path, and a save always looks at the disk itself before writing,
 * then writes with compare-and-swap.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import type { ChangeFeed, ChangeSource, DiskChange } from './change-source.ts';

/** A change event, as `Filesystem.watch` yields it. */
export interface WatchedChange {
  readonly type: 'created' | 'modified' | 'deleted' | 'renamed';
  readonly path: string;
  readonly oldPath?: string | undefined;
}

/** The watcher `Filesystem.watch` returns. */
export interface ChangeWatcher extends AsyncIterable<WatchedChange> {
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/** A filesystem that can watch. */
export interface WatchingFilesystem {
  watch(path: string, options?: { recursive?: boolean; signal?: AbortSignal }): ChangeWatcher;
}

/** Whether `fs` declares and has `watch`. */
export function canWatch(fs: Filesystem): fs is Filesystem & WatchingFilesystem {
  return fs.capabilities.watch && typeof (fs as Partial<WatchingFilesystem>).watch === 'function';
}

/** The paths events named since the last `take`. */
class WatchFeed implements ChangeFeed {
  readonly #source: WatchSource;
  readonly touched = new Set<string>();
  readonly moved = new Map<string, string>();
  #first = true;

  constructor(source: WatchSource) {
    this.#source = source;
  }

  async take(paths: readonly string[]): Promise<readonly DiskChange[]> {
    const healthy = await this.#source.healthy;
    if (this.#first || !healthy) {
      this.#first = false;
      return paths.map((path) => ({ path, renamedTo: this.moved.get(path) }));
    }
    const out: DiskChange[] = [];
    for (const path of paths) {
      if (!this.touched.delete(path)) continue;
      out.push({ path, renamedTo: this.moved.get(path) });
      this.moved.delete(path);
    }
    return out;
  }

  close(): void {
    this.#source.feeds.delete(this);
  }
}

/**
 * One recursive watcher on the workspace root.
 *
 * @example
 * ```ts
 * if (canWatch(fs)) { const feed = new WatchSource(fs).feed(); await feed.take(['a.ts']); }
 * ```
 */
export class WatchSource implements ChangeSource {
  readonly kind = 'watch';
  readonly feeds = new Set<WatchFeed>();
  #alive = true;
  readonly #started: Promise<boolean>;
  readonly #watcher: ChangeWatcher;
  readonly #pump: Promise<void>;

  constructor(fs: WatchingFilesystem) {
    const watcher = fs.watch('', { recursive: true });
    this.#watcher = watcher;
    this.#started = watcher.ready.then(
      () => true,
      () => false,
    );
    this.#pump = (async () => {
      for await (const e of watcher) {
        for (const feed of this.feeds) {
          feed.touched.add(e.path);
          if (e.type === 'renamed' && e.oldPath !== undefined) {
            feed.touched.add(e.oldPath);
            feed.moved.set(e.oldPath, e.path);
          }
        }
      }
    })().then(
      () => {
        this.#alive = false;
      },
      () => {
        this.#alive = false;
      },
    );
  }

  /** `false` once the watcher failed to start or stopped: every feed then looks at every path. */
  get healthy(): Promise<boolean> {
    return this.#started.then((ok) => ok && this.#alive);
  }

  feed(): ChangeFeed {
    const feed = new WatchFeed(this);
    this.feeds.add(feed);
    return feed;
  }

  async close(): Promise<void> {
    this.feeds.clear();
    await this.#watcher.close();
    await this.#pump;
  }
}
