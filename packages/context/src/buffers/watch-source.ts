/**
 * The source for a backend with `capabilities.watch`: one recursive watcher
 * on the workspace; a buffer call looks only at the paths an event named.
 * The watch types are declared here by shape (they match
 * `Filesystem.watch` in `@ctxfs/core` once that lands), so this module
 * depends on nothing else. An event that arrives late costs nothing in
 * safety: a save always looks at the disk itself before writing, and the
 * write is compare-and-swap.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import type { ChangeSource, DiskChange } from './change-source.ts';

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

/**
 * Collects the paths events name until a buffer call takes them.
 *
 * @example
 * ```ts
 * if (canWatch(fs)) { const source = new WatchSource(fs); await source.ready; }
 * ```
 */
export class WatchSource implements ChangeSource {
  readonly kind = 'watch';
  readonly ready: Promise<void>;
  readonly #watcher: ChangeWatcher;
  readonly #touched = new Set<string>();
  readonly #moved = new Map<string, string>();
  readonly #pump: Promise<void>;

  constructor(fs: WatchingFilesystem) {
    const watcher = fs.watch('', { recursive: true });
    this.#watcher = watcher;
    this.ready = watcher.ready;
    this.#pump = (async () => {
      for await (const e of watcher) {
        this.#touched.add(e.path);
        if (e.type === 'renamed' && e.oldPath !== undefined) {
          this.#touched.add(e.oldPath);
          this.#moved.set(e.oldPath, e.path);
        }
      }
    })().catch(() => undefined);
  }

  async take(paths: readonly string[]): Promise<readonly DiskChange[]> {
    await this.ready;
    const out: DiskChange[] = [];
    for (const path of paths) {
      if (!this.#touched.delete(path)) continue;
      const renamedTo = this.#moved.get(path);
      this.#moved.delete(path);
      out.push({ path, renamedTo });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.#watcher.close();
    await this.#pump;
  }
}
