/**
 * Where buffers learn that files changed on disk. A workspace has one
 * source; each session's buffers read it through their own feed, which
 * answers, for the paths those buffers hold, which may have changed since
 * the feed last asked; the buffers then look (stat and content hash) and
 * merge. Our own saves need no suppression: a buffer that just saved holds
 * the saved content's hash, so the change it caused compares equal and
 * nothing loops.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import { canWatch, WatchSource } from './watch-source.ts';

/** What a feed knows about one path. */
export interface DiskChange {
  readonly path: string;
  /** Set when the source saw the file move (a watcher's `renamed` event). */
  readonly renamedTo?: string | undefined;
}

/** One consumer's view of a source: what changed since it last asked. */
export interface ChangeFeed {
  /** Of `paths`, those that may differ from what was last seen, and where they moved. */
  take(paths: readonly string[]): Promise<readonly DiskChange[]>;
  close(): void;
}

/** A source of possible disk changes, shared by a workspace's sessions. */
export interface ChangeSource {
  /** `watch`: events name the changed paths; `polling`: every path is looked at on every call. */
  readonly kind: 'polling' | 'watch';
  feed(): ChangeFeed;
  close(): Promise<void>;
}

const EVERY_PATH: ChangeFeed = {
  take: (paths) => Promise.resolve(paths.map((path) => ({ path }))),
  close: () => undefined,
};

/**
 * The source for a backend without `watch`: every path may have changed, so
 * every buffer call looks at the disk (one stat and one hash per open file).
 *
 * @example
 * ```ts
 * await new PollingSource().feed().take(['a.ts']); // [{ path: 'a.ts' }]
 * ```
 */
export class PollingSource implements ChangeSource {
  readonly kind = 'polling';

  feed(): ChangeFeed {
    return EVERY_PATH;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A watcher where the backend declares `capabilities.watch`, else polling.
 *
 * @example
 * ```ts
 * const source = changeSourceFor(fs); // PollingSource on every backend today
 * ```
 */
export function changeSourceFor(fs: Filesystem): ChangeSource {
  return canWatch(fs) ? new WatchSource(fs) : new PollingSource();
}
