/**
 * Where buffers learn that files changed on disk. A source answers, for the
 * paths a buffer set holds, which may have changed since it last asked; the
 * buffers then look (stat and content hash) and merge. Our own saves need no
 * suppression: a buffer that just saved holds the saved content's hash, so
 * the change it caused compares equal and nothing loops.
 *
 * @module
 */

/** What a source knows about one path. */
export interface DiskChange {
  readonly path: string;
  /** Set when the source saw the file move (a watcher's `renamed` event). */
  readonly renamedTo?: string | undefined;
}

/** A source of possible disk changes. */
export interface ChangeSource {
  /** `watch`: events name the changed paths; `polling`: every path is looked at on every call. */
  readonly kind: 'polling' | 'watch';
  /** Of `paths`, those that may differ from what was last seen, and where they moved. */
  take(paths: readonly string[]): Promise<readonly DiskChange[]>;
  close(): Promise<void>;
}

/**
 * The source for a backend without `watch`: every path may have changed, so
 * every buffer call looks at the disk (one stat and one hash per open file).
 *
 * @example
 * ```ts
 * const source = new PollingSource();
 * await source.take(['a.ts']); // [{ path: 'a.ts' }]
 * ```
 */
export class PollingSource implements ChangeSource {
  readonly kind = 'polling';

  take(paths: readonly string[]): Promise<readonly DiskChange[]> {
    return Promise.resolve(paths.map((path) => ({ path })));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
