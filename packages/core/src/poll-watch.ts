/**
 * Watching by polling, for backends that cannot be told of changes (a
 * container whose image has no inotify tool): the backend takes a picture
 * of the watched tree on an interval, and consecutive pictures are diffed
 * into created, modified and deleted events.
 *
 * @module
 */

import type { FsError } from './errors.ts';
import type { FileKind, FileStat, Filesystem } from './types.ts';
import type { WatchPlan, WatchSink } from './watch.ts';

/** One entry of a picture: its kind and what changes when its content does (size, times, mode). */
export interface PolledEntry {
  readonly kind: FileKind;
  /** Compared between pictures; a directory's is ignored (its entries speak for it). */
  readonly signature: string;
}

/** A picture of the watched tree: normalized path → entry. */
export type PolledTree = ReadonlyMap<string, PolledEntry>;

/** Options of {@link startPollingWatch}. */
export interface PollingWatchOptions {
  /** Pause between the end of one picture and the start of the next, ms. */
  readonly intervalMs: number;
  /** Takes a picture of `plan`'s scope (an empty map when the watched path is gone). */
  readonly picture: (plan: WatchPlan) => Promise<PolledTree>;
  /**
   * Whether a failed picture is passing (the backend is briefly out of reach):
   * the round is skipped and the next picture is diffed against the last good
   * one, so changes made meanwhile are still reported. Others end the watch.
   */
  readonly transient?: (err: FsError | unknown) => boolean;
}

/**
 * The events between two pictures: what appeared, what vanished (children
 * before their directories), and files whose signature changed. A path that
 * changed kind is a deletion and a creation.
 *
 * @example
 * ```ts
 * diffPictures(new Map([['a', { kind: 'file', signature: '1' }]]), new Map([['a', { kind: 'file', signature: '2' }]]), sink);
 * // sink.emit({ type: 'modified', path: 'a', kind: 'file' })
 * ```
 */
export function diffPictures(before: PolledTree, after: PolledTree, sink: Pick<WatchSink, 'emit'>): void {
  const gone: string[] = [];
  for (const [path, old] of before) {
    const now = after.get(path);
    if (now === undefined || now.kind !== old.kind) gone.push(path);
  }
  // Deepest first, so a deleted directory comes after what was in it.
  gone.sort((a, b) => b.split('/').length - a.split('/').length);
  for (const path of gone) sink.emit({ type: 'deleted', path, kind: before.get(path)?.kind });
  for (const [path, now] of after) {
    const old = before.get(path);
    if (old === undefined || old.kind !== now.kind) sink.emit({ type: 'created', path, kind: now.kind });
    else if (now.kind !== 'directory' && old.signature !== now.signature) sink.emit({ type: 'modified', path, kind: now.kind });
  }
}

/**
 * Starts polling `plan`: the first picture is taken before this resolves
 * (so changes after `ready` are seen), then one every `intervalMs` after the
 * previous one ends — a slow picture delays the next instead of piling up.
 * Resolves with the function that stops it (and waits for a picture in flight).
 *
 * @example
 * ```ts
 * protected override startWatch(plan: WatchPlan, sink: WatchSink) {
 *   return startPollingWatch(plan, sink, { intervalMs: 500, picture: (p) => this.picture(p) });
 * }
 * ```
 */
export async function startPollingWatch(plan: WatchPlan, sink: WatchSink, options: PollingWatchOptions): Promise<() => Promise<void>> {
  let last = await options.picture(plan);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight: Promise<void> | undefined;
  const round = async () => {
    timer = undefined;
    try {
      const next = await options.picture(plan);
      if (stopped) return;
      diffPictures(last, next, sink);
      last = next;
    } catch (err) {
      if (stopped) return;
      if (options.transient?.(err) !== true) {
        sink.fail(err);
        stopped = true;
        return;
      }
    }
    if (!stopped) timer = setTimeout(tick, options.intervalMs);
  };
  const tick = () => {
    inFlight = round();
  };
  timer = setTimeout(tick, options.intervalMs);
  return async () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    await inFlight;
  };
}

function entryOf(stat: FileStat): PolledEntry {
  return { kind: stat.kind, signature: `${stat.size}|${stat.mtime.getTime()}|${stat.ctime?.getTime() ?? ''}|${stat.mode ?? ''}` };
}

/**
 * A picture of `plan` taken through the protocol itself: a `stat` of the
 * watched path and, for a directory, one `walk` with stats (to depth 1 unless
 * recursive). Any backend whose walk is one bulk call can poll with it.
 * A watched path that is gone gives an empty picture.
 *
 * @example
 * ```ts
 * startPollingWatch(plan, sink, { intervalMs: 500, picture: (p) => walkPicture(this, p) });
 * ```
 */
export async function walkPicture(fs: Pick<Filesystem, 'stat' | 'walk'>, plan: WatchPlan): Promise<PolledTree> {
  const out = new Map<string, PolledEntry>();
  let root: FileStat;
  try {
    root = await fs.stat(plan.path);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return out;
    throw err;
  }
  out.set(plan.path, entryOf(root));
  if (root.kind !== 'directory') return out;
  try {
    for await (const batch of fs.walk(plan.path, { stat: true, maxDepth: plan.recursive ? undefined : 1 })) {
      for (const entry of batch) if (entry.stat !== undefined) out.set(entry.path, entryOf(entry.stat));
    }
  } catch (err) {
    // Removed between the stat and the walk: gone, as far as this picture knows.
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return new Map();
    throw err;
  }
  return out;
}
