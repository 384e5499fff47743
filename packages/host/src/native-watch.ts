/**
 * The host's watching, on Node's own `fs.watch`.
 *
 * - **Linux** (and every platform without a native recursive watcher):
 *   inotify has no recursive mode, so a tree is one non-recursive `fs.watch`
 *   per directory (libuv's inotify: one descriptor per process, one watch
 *   per directory, events as soon as the loop reads them). A directory that
 *   appears is watched and then listed, and what the listing finds is
 *   reported `created`: files made in it before its watch began are not
 *   lost (`mkdir -p a/b/c && touch a/b/c/x` reports all four).
 * - **macOS and Windows**: Node's recursive `fs.watch`, which is FSEvents and
 *   ReadDirectoryChangesW there.
 *
 * Chosen over @parcel/watcher by the watch bench (bench/README.md): parcel
 * batches events over ~50 ms, which was its median latency against a 50 ms
 * goal, and on a 35,000-file tree it lost about one file of a 1,000-file
 * burst in most runs here (upstream parcel-bundler/watcher#183; #97 and #243
 * are its new-directory races). This watcher reports in about a millisecond,
 * missed none, and keeps no per-file state: only one handle per directory.
 *
 * A change's kind comes from an `lstat` when its event arrives: a name that
 * exists is `created` (inotify's create and moved-in) or `modified`, one that
 * does not is `deleted`. A rename is therefore `deleted` + `created`, and a
 * file atomically replaced is `deleted`/`created`, which the shared coalescer
 * folds into `modified`. Not reported by libuv, and so not here: inotify's
 * queue overflow (16,384 unread events by default).
 *
 * @module
 */

import nodeFs from 'node:fs';
import nodePath from 'node:path';
import { type FileKind, fsError, joinPath, linkOutsideRoot, parentPath, type WatchEventType, type WatchPlan, type WatchSink } from '@ctxfs/core';
import { kindOfStats } from './file-kind.ts';

/** Where the host watches, and what it never reports. */
export interface NativeWatchTarget {
  /** Real path of the workspace root. */
  readonly root: string;
  /** Names neither watched nor reported (the host's `exclude`, `.git` by default). */
  readonly exclude: ReadonlySet<string>;
}

/** Where a watch's changes go, relative to the watched directory. */
interface ChangeSink {
  emit(rel: string, type: WatchEventType, kind: FileKind | undefined): void;
  fail(err: unknown): void;
  overflow(): void;
}

/** Platforms whose `fs.watch` is natively recursive. */
const NATIVE_RECURSIVE = new Set<NodeJS.Platform>(['darwin', 'win32']);

/**
 * Starts watching `plan` below `target.root`, reporting to `sink`. A file is
 * watched through its directory; a non-recursive watch is the directory's
 * own entries (the shared watcher filters to the plan's scope). Paths are
 * relative to the real path of the watched directory, so nothing outside the
 * root can be named, and a symlink to a directory is reported as the link,
 * never descended.
 */
export async function startNativeWatch(target: NativeWatchTarget, plan: WatchPlan, sink: WatchSink): Promise<() => Promise<void>> {
  const dir = plan.kind === 'directory' ? plan.path : parentPath(plan.path);
  const real = nodeFs.realpathSync.native(nodePath.join(target.root, dir));
  const fromRoot = nodePath.relative(target.root, real);
  if (fromRoot.startsWith('..') || nodePath.isAbsolute(fromRoot)) {
    throw linkOutsideRoot('watch', plan.path);
  }
  const changes: ChangeSink = {
    emit: (rel, type, kind) => sink.emit({ type, path: joinPath(dir, rel), kind }),
    fail: (err) => sink.fail(err),
    overflow: () => sink.overflow(),
  };
  const recursive = plan.kind === 'directory' && plan.recursive;
  if (recursive && NATIVE_RECURSIVE.has(process.platform)) return watchNativeRecursive(real, target.exclude, changes, dir);
  const tree = new DirectoryWatches(real, recursive, target.exclude, changes, dir);
  try {
    await tree.start();
  } catch (err) {
    tree.close(); // what was watched before the failure would otherwise keep the process alive
    throw err;
  }
  return async () => tree.close();
}

/** Node's recursive `fs.watch`: names arrive relative to `real`, at any depth. */
async function watchNativeRecursive(real: string, exclude: ReadonlySet<string>, changes: ChangeSink, dir: string): Promise<() => Promise<void>> {
  const watcher = watchDirectory(real, true, dir, (type, name) => {
    if (name === undefined) {
      changes.overflow();
      return;
    }
    const rel = name.split(nodePath.sep).join('/');
    if (rel.split('/').some((segment) => exclude.has(segment))) return;
    const st = lstatOrUndefined(nodePath.join(real, rel));
    if (st !== undefined) changes.emit(rel, type === 'rename' ? 'created' : 'modified', kindOfStats(st));
    else if (type === 'rename') changes.emit(rel, 'deleted', undefined);
  });
  watcher.on('error', (err) => changes.fail(err));
  return async () => watcher.close();
}

/**
 * One non-recursive watch per directory of a tree, kept in step with it:
 * a directory that appears is watched and listed, one that goes is dropped
 * with everything below it.
 */
class DirectoryWatches {
  readonly #real: string;
  readonly #recursive: boolean;
  readonly #exclude: ReadonlySet<string>;
  readonly #changes: ChangeSink;
  /** The workspace path watched, for errors. */
  readonly #dir: string;
  /** Watched directories by path relative to `#real` (`''` is the top), with the inode watched. */
  readonly #watches = new Map<string, { readonly watcher: nodeFs.FSWatcher; readonly ino: number | undefined }>();
  #closed = false;

  constructor(real: string, recursive: boolean, exclude: ReadonlySet<string>, changes: ChangeSink, dir: string) {
    this.#real = real;
    this.#recursive = recursive;
    this.#exclude = exclude;
    this.#changes = changes;
    this.#dir = dir;
  }

  /** Watches the top, then (recursive) every directory below it; resolves when all are watched. */
  async start(): Promise<void> {
    this.#watch('');
    if (this.#recursive) await this.#descend('', false);
  }

  close(): void {
    this.#closed = true;
    for (const { watcher } of this.#watches.values()) watcher.close();
    this.#watches.clear();
  }

  /**
   * Watches the directory `rel`. False when it cannot be (gone already,
   * not a directory, unreadable): its parent's events and listing speak for
   * it. The top's failure, and running out of inotify watches, throw.
   */
  #watch(rel: string): boolean {
    let watcher: nodeFs.FSWatcher;
    try {
      watcher = watchDirectory(nodePath.join(this.#real, rel), false, joinPath(this.#dir, rel), (type, name) => this.#onEvent(rel, type, name));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (rel !== '' && (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'ELOOP')) return false;
      throw err;
    }
    watcher.on('error', (err) => {
      if (rel === '') this.#changes.fail(err);
      else this.#forget(rel);
    });
    this.#watches.get(rel)?.watcher.close();
    // The inode tells a directory already watched from one that replaced it under the same name.
    this.#watches.set(rel, { watcher, ino: lstatOrUndefined(nodePath.join(this.#real, rel))?.ino });
    return true;
  }

  /**
   * Lists the tree below `top` breadth first, watching each directory found.
   * `report`: each entry found is reported `created` (a directory that just
   * appeared: what was made in it before its watch began).
   */
  async #descend(top: string, report: boolean): Promise<void> {
    const queue = [top];
    for (let next = queue.shift(); next !== undefined && !this.#closed; next = queue.shift()) {
      let entries: nodeFs.Dirent[];
      try {
        entries = await nodeFs.promises.readdir(nodePath.join(this.#real, next), { withFileTypes: true });
      } catch {
        continue; // gone or unreadable since it was watched: its parent reports what became of it
      }
      for (const entry of entries) {
        if (this.#closed) return;
        if (this.#exclude.has(entry.name)) continue;
        const rel = next === '' ? entry.name : `${next}/${entry.name}`;
        if (report) this.#changes.emit(rel, 'created', kindOfStats(entry));
        if (entry.isDirectory() && this.#watch(rel)) queue.push(rel);
      }
    }
  }

  #onEvent(parent: string, type: 'rename' | 'change', name: string | undefined): void {
    if (this.#closed) return;
    if (name === undefined) {
      this.#changes.overflow();
      return;
    }
    if (this.#exclude.has(name)) return;
    const rel = parent === '' ? name : `${parent}/${name}`;
    const st = lstatOrUndefined(nodePath.join(this.#real, rel));
    if (st === undefined) {
      if (!isDirectory(nodePath.join(this.#real, parent))) {
        // The watched directory itself went (inotify names it by its own
        // name): its parent reports it; the top is reported here.
        this.#forget(parent);
        if (parent === '') this.#changes.emit('', 'deleted', 'directory');
        return;
      }
      // A change of a name that is gone already: its removal has its own event.
      if (type === 'change') return;
      const kind = this.#watches.has(rel) ? 'directory' : undefined;
      this.#forget(rel);
      this.#changes.emit(rel, 'deleted', kind);
      return;
    }
    const kind = kindOfStats(st);
    if (type === 'change') {
      this.#changes.emit(rel, 'modified', kind);
      return;
    }
    this.#changes.emit(rel, 'created', kind);
    if (kind !== 'directory' || !this.#recursive) return;
    // Already watched by a listing that found it first (mkdir -p): nothing to add.
    if (this.#watches.get(rel)?.ino === st.ino) return;
    // A new directory (or one moved in, or one that replaced another): a fresh watch, then what it already holds.
    this.#forget(rel);
    try {
      if (!this.#watch(rel)) return;
    } catch (err) {
      this.#changes.fail(err);
      return;
    }
    this.#descend(rel, true).catch((err: unknown) => this.#changes.fail(err));
  }

  /** Stops watching `rel` and every directory below it. */
  #forget(rel: string): void {
    if (rel === '') {
      this.close();
      return;
    }
    const own = this.#watches.get(rel);
    if (own === undefined) return;
    own.watcher.close();
    this.#watches.delete(rel);
    const below = `${rel}/`;
    for (const [path, { watcher }] of this.#watches) {
      if (!path.startsWith(below)) continue;
      watcher.close();
      this.#watches.delete(path);
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `fs.watch` of one directory, with names as bytes so that a name that is
 * not UTF-8 (no workspace path can name it) is dropped, not mangled. A name
 * of `undefined` means the platform could not say what changed. Running out
 * of inotify watches is `ENOSPC` with the limit to raise.
 */
function watchDirectory(
  absolute: string,
  recursive: boolean,
  path: string,
  onEvent: (type: 'rename' | 'change', name: string | undefined) => void,
): nodeFs.FSWatcher {
  try {
    return nodeFs.watch(absolute, { recursive, encoding: 'buffer' }, (type, bytes) => {
      if (bytes === null) {
        onEvent(type, undefined);
        return;
      }
      let name: string;
      try {
        name = utf8.decode(bytes);
      } catch {
        return;
      }
      onEvent(type, name);
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC') {
      throw fsError('ENOSPC', 'watch', path, {
        reason: 'the system limit on inotify watches is reached (one a directory)',
        hint: 'raise fs.inotify.max_user_watches (sysctl), watch a smaller directory, or exclude large generated directories',
        cause: err,
      });
    }
    throw err;
  }
}

function lstatOrUndefined(absolute: string): nodeFs.Stats | undefined {
  try {
    return nodeFs.lstatSync(absolute, { throwIfNoEntry: false });
  } catch {
    return undefined; // ENOTDIR: a parent was replaced by a file; the name is gone either way
  }
}

function isDirectory(absolute: string): boolean {
  return lstatOrUndefined(absolute)?.isDirectory() === true;
}
