/**
 * Watching, the half every backend shares: a backend only reports raw
 * changes to a {@link WatchSink}; this module turns them into the
 * {@link Watcher} callers see — kept to the watched scope (recursive or
 * not), without unaddressable names or the backend's own files, debounced
 * and coalesced per path, bounded, and closed cleanly.
 *
 * @module
 */

import { type FsError, fsError, toFsError } from './errors.ts';
import { isAddressableName, isSameOrInside, parentPath } from './path.ts';
import type { FileKind, WatchEvent, Watcher } from './types.ts';

/** Default debounce window of a watcher, ms. */
export const DEFAULT_WATCH_DEBOUNCE_MS = 20;
/** Default bound on events held for a slow consumer. */
export const DEFAULT_WATCH_MAX_PENDING = 10_000;

/** Where a backend reports what it sees. Paths are normalized and workspace-relative. */
export interface WatchSink {
  /** One raw change. Out-of-scope, unaddressable and ignored paths are dropped here. */
  emit(event: WatchEvent): void;
  /** The backend lost events (a kernel queue overflowed): the consumer must rescan. */
  overflow(): void;
  /** The backend cannot go on: iteration throws `err` (as an FsError of `watch`) after the events already held. */
  fail(err: unknown): void;
}

/** What to watch, validated by the base. */
export interface WatchPlan {
  /** Normalized path watched: a directory, or one file. */
  readonly path: string;
  /** What `path` is. */
  readonly kind: FileKind;
  /** Below subdirectories too. Always `false` for a file. */
  readonly recursive: boolean;
}

/**
 * Starts a backend's watch: resolves, once changes are being observed, with
 * the function that stops it and frees its resources.
 */
export type WatchStart = (sink: WatchSink) => Promise<() => Promise<void> | void>;

/** Options of {@link createWatcher}. */
export interface CreateWatcherOptions {
  readonly debounceMs?: number | undefined;
  readonly maxPending?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Paths the backend never reports (its own temp and lock files). */
  readonly ignore?: ((path: string) => boolean) | undefined;
  /** Called once the watcher is closed, whatever closed it. */
  readonly onClose?: (() => void) | undefined;
}

/**
 * True when a change at `path` concerns a watch of `plan`: the watched path
 * itself, anything below it when recursive, its direct children otherwise.
 *
 * @example
 * ```ts
 * inWatchScope({ path: 'src', kind: 'directory', recursive: false }, 'src/a/b.ts'); // false
 * ```
 */
export function inWatchScope(plan: WatchPlan, path: string): boolean {
  if (path === plan.path) return true;
  if (plan.kind !== 'directory' || !isSameOrInside(plan.path, path)) return false;
  return plan.recursive || parentPath(path) === plan.path;
}

function addressable(path: string): boolean {
  if (path === '') return true;
  for (const segment of path.split('/')) if (!isAddressableName(segment)) return false;
  return true;
}

/**
 * Coalesces events per path until they are taken: later events on a path
 * fold into the earlier ones (`created`+`modified` is `created`, `created`+
 * `deleted` is nothing, `deleted`+`created` of the same kind is `modified`,
 * a rename of a just-created file is a `created` of the new name). Paths keep
 * the order of their first event.
 *
 * @example
 * ```ts
 * const c = new EventCoalescer();
 * c.add({ type: 'created', path: 'a' });
 * c.add({ type: 'modified', path: 'a' });
 * c.take(); // [{ type: 'created', path: 'a' }]
 * ```
 */
export class EventCoalescer {
  readonly #byPath = new Map<string, WatchEvent[]>();
  #count = 0;

  /** Events held. */
  get size(): number {
    return this.#count;
  }

  add(event: WatchEvent): void {
    if (event.type === 'renamed' && event.oldPath !== undefined) {
      this.#addRename(event, event.oldPath);
      return;
    }
    const held = this.#byPath.get(event.path);
    const last = held?.[held.length - 1];
    if (held === undefined || last === undefined) {
      this.#set(event.path, [event]);
      return;
    }
    const merged = fold(last, event);
    this.#set(event.path, merged === undefined ? held.slice(0, -1) : [...held.slice(0, -1), ...merged]);
  }

  #addRename(event: WatchEvent, oldPath: string): void {
    const before = this.#byPath.get(oldPath) ?? [];
    this.#set(oldPath, []);
    const kind = event.kind ?? before[before.length - 1]?.kind;
    if (before[0]?.type === 'created') {
      // Created and renamed within one window: to the consumer it is just new.
      this.#set(event.path, [{ type: 'created', path: event.path, kind }]);
      return;
    }
    // A chain of renames is one, from where the entry was first seen.
    const origin = before.find((e) => e.type === 'renamed')?.oldPath ?? oldPath;
    const changed = before.some((e) => e.type === 'modified');
    if (origin === event.path) {
      // Renamed away and back: it is where it was, perhaps changed.
      this.#set(event.path, [{ type: 'modified', path: event.path, kind }]);
      return;
    }
    const out: WatchEvent[] = [{ type: 'renamed', path: event.path, oldPath: origin, kind }];
    // A change before the rename is a change of the renamed file.
    if (changed) out.push({ type: 'modified', path: event.path, kind });
    this.#set(event.path, out);
  }

  #set(path: string, events: WatchEvent[]): void {
    this.#count += events.length - (this.#byPath.get(path)?.length ?? 0);
    if (events.length === 0) this.#byPath.delete(path);
    else this.#byPath.set(path, events);
  }

  /** The held events, in order, and forgets them. */
  take(): WatchEvent[] {
    const out: WatchEvent[] = [];
    for (const events of this.#byPath.values()) out.push(...events);
    this.#byPath.clear();
    this.#count = 0;
    return out;
  }

  clear(): void {
    this.#byPath.clear();
    this.#count = 0;
  }
}

/** `last` then `next` on the same path, as zero, one or two events. */
function fold(last: WatchEvent, next: WatchEvent): WatchEvent[] | undefined {
  const kind = next.kind ?? last.kind;
  switch (last.type) {
    case 'created':
      if (next.type === 'deleted') return undefined;
      return [{ ...last, kind }];
    case 'modified':
      if (next.type === 'deleted' || next.type === 'created') return [next];
      return [{ ...last, kind }];
    case 'deleted':
      if (next.type === 'created' || next.type === 'modified') {
        // Replaced by the same kind of entry (an atomic save): a change of content.
        if (last.kind === undefined || next.kind === undefined || last.kind === next.kind) return [{ type: 'modified', path: next.path, kind }];
        return [last, next];
      }
      return [last];
    case 'renamed':
      if (next.type === 'deleted') return [{ type: 'deleted', path: next.path, kind }];
      return [last, { type: 'modified', path: next.path, kind }];
  }
}

/**
 * Builds the {@link Watcher} of `plan` over a backend's `start`. Everything
 * a backend reports passes the scope, name and ignore filters, then waits
 * `debounceMs` (from the first event of a window) in an {@link EventCoalescer}.
 * When more than `maxPending` events are held, they are dropped for one
 * `modified` of the watched path, the "rescan" signal.
 *
 * @example
 * ```ts
 * const watcher = createWatcher({ path: '', kind: 'directory', recursive: true }, async (sink) => {
 *   const off = emitter.on('change', (path) => sink.emit({ type: 'modified', path }));
 *   return () => off();
 * });
 * ```
 */
export function createWatcher(plan: WatchPlan, start: WatchStart, options: CreateWatcherOptions = {}): Watcher {
  const debounceMs = options.debounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS;
  const maxPending = options.maxPending ?? DEFAULT_WATCH_MAX_PENDING;
  const coalescer = new EventCoalescer();
  const ready: WatchEvent[] = [];
  let overflowed = false;
  let failure: FsError | undefined;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stop: (() => Promise<void> | void) | undefined;
  let stopped: Promise<void> | undefined;
  let waiters: Array<() => void> = [];

  const notify = () => {
    const woken = waiters;
    waiters = [];
    for (const w of woken) w();
  };
  let flushPending = false;
  const flush = () => {
    timer = undefined;
    flushPending = false;
    if (closed) return;
    if (overflowed) {
      overflowed = false;
      coalescer.clear();
      ready.length = 0;
      ready.push({ type: 'modified', path: plan.path });
    } else {
      ready.push(...coalescer.take());
    }
    notify();
  };
  const schedule = () => {
    if (flushPending || closed) return;
    flushPending = true;
    // No window: hand the events over as soon as the code that caused them yields.
    if (debounceMs === 0) queueMicrotask(flush);
    else timer = setTimeout(flush, debounceMs);
  };
  const overflow = () => {
    if (closed) return;
    overflowed = true;
    coalescer.clear();
    schedule();
  };

  const sink: WatchSink = {
    emit(event) {
      if (closed || overflowed) return;
      const inside = accept(event.path);
      if (event.type === 'renamed' && event.oldPath !== undefined) {
        const wasInside = accept(event.oldPath);
        if (!inside && !wasInside) return;
        if (!inside) return sink.emit({ type: 'deleted', path: event.oldPath, kind: event.kind });
        if (!wasInside) return sink.emit({ type: 'created', path: event.path, kind: event.kind });
      } else if (!inside) {
        return;
      }
      coalescer.add(event);
      if (coalescer.size + ready.length > maxPending) overflow();
      else schedule();
    },
    overflow,
    fail(err) {
      if (closed || failure !== undefined) return;
      failure = toFsError(err, 'watch', plan.path);
      if (timer !== undefined) clearTimeout(timer);
      flush();
      notify();
      void release();
    },
  };
  function accept(path: string): boolean {
    return inWatchScope(plan, path) && addressable(path) && options.ignore?.(path) !== true;
  }

  const release = (): Promise<void> => {
    stopped ??= (async () => {
      const s = stop;
      stop = undefined;
      await s?.();
    })();
    return stopped;
  };

  const started = (async () => {
    const s = await start(sink);
    if (closed) await s();
    else stop = s;
  })();
  const readyPromise = started.catch((err: unknown) => {
    const error = toFsError(err, 'watch', plan.path);
    failure ??= error;
    notify();
    throw error;
  });
  // Callers that only iterate still see the failure there; never unhandled here.
  readyPromise.catch(() => {});

  const close = async (): Promise<void> => {
    if (!closed) {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      coalescer.clear();
      ready.length = 0;
      options.signal?.removeEventListener('abort', onAbort);
      options.onClose?.();
      notify();
    }
    await started.catch(() => {});
    await release();
  };
  const onAbort = () => void close();
  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  async function* iterate(): AsyncGenerator<WatchEvent> {
    try {
      for (;;) {
        const next = ready.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (closed) return;
        if (failure !== undefined) throw failure;
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
        });
      }
    } finally {
      // Leaving the loop (break, return, throw) ends the watch.
      await close();
    }
  }

  return {
    ready: readyPromise,
    close,
    [Symbol.asyncIterator]: () => iterate(),
  };
}

/**
 * The `EUNSUPPORTED` of a backend that cannot watch.
 *
 * @example
 * ```ts
 * if (!this.capabilities.watch) throw watchUnsupported(path);
 * ```
 */
export function watchUnsupported(path: string): FsError {
  return fsError('EUNSUPPORTED', 'watch', path, {
    reason: 'this backend cannot watch for changes',
    hint: 'check fs.capabilities.watch; poll with stat() or digest() instead',
  });
}
