/**
 * Where buffers learn that files changed on disk. A workspace has one
 * source; each session's buffers read it through their own feed, which
 * answers, for the paths those buffers hold, what to look at and where a
 * file moved; the buffers then look (stat and content hash) and merge. Our own saves need no suppression: a buffer that just saved holds
 * the saved content's hash, so the change it caused compares equal and
 * nothing loops.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';

/** What a feed knows about one path. */
export interface DiskChange {
  readonly path: string;
  /** Set when the source knows where the file moved. */
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
  /** `polling`: every open path is looked at on every call (see {@link changeSourceFor}). */
  readonly kind: 'polling';
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
 * The source buffers use on every backend: a look at every open path on
 * every call. Watching (`Filesystem.watch`) does not replace the look: its
 * events arrive after the watcher's coalescing window (20 ms on the host),
 * and a call made in that window must still see the change; a look is
 * one stat, and a hash only when the stat moved, per open file. A move is
 * found by looking too (the content, beside the old name). A watch-fed
 * source was tried and left out: on memory it lost a person's change when a
 * rename event and the buffer's own look disagreed.
 *
 * @example
 * ```ts
 * const source = changeSourceFor(fs); // a PollingSource
 * ```
 */
export function changeSourceFor(_fs: Filesystem): ChangeSource {
  return new PollingSource();
}
