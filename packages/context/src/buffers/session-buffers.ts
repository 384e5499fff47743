/**
 * The buffers an agent's session holds open: open, list, status, diff,
 * reload, save, close, the edit operations, undo/redo — each call first
 * takes in what changed on disk (the change source says where to look) and
 * merges it by the buffer's permission. A save goes through the context
 * layer's edit path (policy, approval, audit, history, compare-and-swap).
 *
 * @module
 */

import { type Filesystem, type FsError, fsError, isFsError, parentPath } from '@ctxfs/core';
import { callText } from '../calls/call-text.ts';
import type { EditResult } from '../edits/edit-result.ts';
import type { EditOptions } from '../edits/file-editor.ts';
import { decodeFile, encodeLike, loadFileText } from '../edits/file-text.ts';
import { sha256Hex } from '../history/version-store.ts';
import { contextPath, rootSpellings } from '../paths/context-path.ts';
import { maskerOf, type Redactor, servedMaskRefusal } from '../safety/redaction.ts';
import { plural } from '../search/narrowing.ts';
import { type BufferDiff, bufferDiff } from './buffer-diff.ts';
import { applyBufferEdit, type BufferEditOp } from './buffer-edits.ts';
import { type ChangeFeed, PollingSource } from './change-source.ts';
import { type BufferStatusKind, type DiskSnapshot, FileBuffer, type SyncOutcome } from './file-buffer.ts';
import { overwrittenNote, placesText } from './overwritten-text.ts';
import { canWriteBack, SYNC_PERMISSIONS, type SyncPermission } from './sync-permission.ts';

/** What the buffers need from the session that owns them. */
export interface BufferHost {
  readonly fs: Filesystem;
  /** The context layer's guarded write (policy, approval, audit, history, compare-and-swap). */
  writeFile(path: string, content: string, options: EditOptions): Promise<EditResult>;
  /** Runs one buffer call through the safety layer (policy and audit). */
  guard<T>(op: string, path: string | undefined, params: Record<string, unknown>, body: () => Promise<T>): Promise<T>;
  /** The file a normalized path names (symbolic links followed), so a buffer has one key whatever the spelling. Default: the path itself. */
  resolve?(path: string): Promise<string>;
  /** Whether the policy lets this agent write `path`: a buffer of a path it may not write opens read-only. */
  mayWrite(path: string): boolean;
  /**
   * The change of this agent that an undo of `path` on disk would revert
   * (its newest one neither an undo nor undone), and whether that undo
   * applies now (a dry run); `undefined` when none is left. A buffer's undo
   * with nothing to undo offers the disk's undo only when it applies;
   * without this, never.
   */
  ownUndo?(path: string): Promise<OwnUndo | undefined>;
  /** Told of every change seen on disk, so the registry and caches catch up. */
  diskChanged?(path: string): Promise<void>;
  /** This session's feed of the workspace's change source (default: a look at every path on every call). */
  changes?(): ChangeFeed;
  /**
   * Masks what a buffer call quotes of the file (its diff, a refused edit's
   * lines) as reads are masked, and refuses an edit that would write a
   * served mask over its secret. Without it texts are served as made.
   */
  readonly redactor?: Redactor | undefined;
}

/** The change of the agent an undo on disk would revert (see {@link BufferHost.ownUndo}). */
export interface OwnUndo {
  readonly seq: number;
  readonly op: string;
  /** `undefined`: the undo applies now; else the code it would be refused with (`ECONFLICT`: later changes touch the same lines). */
  readonly refused: string | undefined;
}

/** Options of {@link SessionBuffers.open}. */
export interface OpenBufferOptions {
  /** Default `read-write` (`read-only` where the policy denies writes). */
  permission?: SyncPermission;
  /** Save after every edit and every merge that leaves the buffer modified. Default false. */
  autoSave?: boolean;
}

/** A buffer's state as calls report it. */
export interface BufferInfo {
  readonly path: string;
  readonly permission: SyncPermission;
  readonly status: BufferStatusKind;
  readonly dirty: boolean;
  /** Counts every change of the buffer's text. */
  readonly bufferVersion: number;
  /** Hash of the disk content the buffer is in step with (`undefined`: absent on disk). */
  readonly diskVersion: string | undefined;
  readonly diskMtime: string | undefined;
  readonly onDisk: boolean;
  readonly autoSave: boolean;
  /** Places both sides changed, waiting for the agent (status `conflict`). */
  readonly collisions: number;
  readonly undo: number;
  readonly redo: number;
  /** History position of the last save. */
  readonly savedSeq: number | undefined;
  /** The buffer followed the file from this path (a rename on disk). */
  readonly renamedFrom: string | undefined;
  /** The last look at the disk: collisions the permission settled, and for which side. */
  readonly settled: number;
  readonly winner: 'disk' | 'buffer' | undefined;
  /**
   * What the newest merge that settled collisions overwrote, and how it
   * comes back: the agent's text (read-write) is kept as an undo entry, and
   * this names the undo that brings it back
   * (`undo(path, { overwritten: true })`); the disk's (admin) goes into the
   * file history when the buffer is saved over it. `undefined` when nothing
   * was overwritten, or it was brought back.
   */
  readonly overwritten: string | undefined;
  /** What to call next, when something waits for the agent. */
  readonly next: string | undefined;
}

/** One row of {@link SessionBuffers.list}. */
export interface ListedBufferFile {
  readonly path: string;
  readonly size: number;
  readonly permission: SyncPermission;
  readonly loaded: boolean;
  readonly dirty: boolean;
}

/** Result of {@link SessionBuffers.save}. */
export interface BufferSave {
  readonly saved: boolean;
  readonly buffer: BufferInfo;
  /** The edit path's result (the version recorded, or why it refused). */
  readonly edit: EditResult | undefined;
}

/** Options of the edit calls. */
export interface BufferEditOptions {
  /** The buffer version the edit was prepared against: refused when the buffer has changed since (a merge moved its lines). */
  bufferVersion?: number;
  /**
   * The content hash the edit was prepared against (what a read of the
   * buffer served as `version`; a prefix of 6+ digits will do): refused when
   * the buffer's content is another one now.
   */
  baseVersion?: string | undefined;
}

/** One edit of a buffer: its state after, and the text and content hash before and after. */
export interface BufferChange {
  readonly buffer: BufferInfo;
  readonly before: string;
  readonly after: string;
  /** Content hash of the buffer before the edit, encoded as the file is (what a read of it served). */
  readonly previousVersion: string;
  readonly version: string;
  /** What a change on disk this call took in overwrote, and how it comes back (see {@link BufferInfo.overwritten}); `undefined` when this call merged nothing over either side. */
  readonly overwritten: string | undefined;
}

/** An open buffer's content as a read serves it. */
export interface BufferContent {
  readonly path: string;
  /** The text encoded as the file on disk is (encoding, byte-order mark, line endings). */
  readonly bytes: Uint8Array;
  readonly text: string;
  readonly mtime: Date | undefined;
  readonly bufferVersion: number;
  readonly dirty: boolean;
  /**
   * What a change on disk overwrote, and how it comes back (see
   * {@link BufferChange.overwritten}): taken in by this read's look, or by
   * an earlier read that served no note of it.
   */
  readonly overwritten: string | undefined;
  /** Tells the buffer the read served the note of {@link overwritten}, so later reads do not say it again. */
  readonly said: () => void;
}

/** Attempts of a save that keeps meeting new changes on disk. */
const SAVE_ATTEMPTS = 5;

/**
 * An agent's open files.
 *
 * @example
 * ```ts
 * const b = ctx.buffers;
 * await b.open('src/a.ts', { permission: 'human' });
 * await b.replace('src/a.ts', 'retries = 3', 'retries = 5');
 * (await b.status('src/a.ts'))[0]?.status; // 'modified' (or 'conflict' when the person changed the same text)
 * await b.save('src/a.ts');
 * ```
 */
export class SessionBuffers {
  readonly #host: BufferHost;
  readonly #open = new Map<string, FileBuffer>();
  readonly #renamedFrom = new Map<FileBuffer, string>();
  readonly #last = new Map<FileBuffer, SyncOutcome>();
  #feed: ChangeFeed | undefined;

  constructor(host: BufferHost) {
    this.#host = host;
  }

  /** Where this session learns of changes on disk; made before the first file is read, so nothing after that read is missed. */
  get #changes(): ChangeFeed {
    this.#feed ??= this.#host.changes?.() ?? new PollingSource().feed();
    return this.#feed;
  }

  /** Loads `path` into a buffer (an open buffer is looked at again and returned). */
  open(path: string, options: OpenBufferOptions = {}): Promise<BufferInfo> {
    return this.#call('buffers.open', path, { ...options }, async (p) => {
      const held = this.#open.get(p);
      if (held) {
        // Opened again: a permission or auto-save given now replaces the old one (within what the policy allows).
        if (options.permission !== undefined) held.permission = this.#allowed(p, options.permission);
        if (options.autoSave !== undefined) held.autoSave = options.autoSave && canWriteBack(held.permission);
        await this.#look(held, true);
        return this.#info(held);
      }
      const buffer = await this.#load(p, options);
      return this.#info(buffer);
    });
  }

  /** Files matching `pattern` (default: the open buffers) with size, permission, loaded and dirty. */
  list(options: { pattern?: string } = {}): Promise<ListedBufferFile[]> {
    return this.#host.guard('buffers.list', '', { ...options }, async () => {
      await this.#lookAll();
      const rows = new Map<string, ListedBufferFile>();
      if (options.pattern !== undefined) {
        for await (const m of this.#host.fs.glob(options.pattern)) {
          if (m.kind !== 'file') continue;
          const size = (await this.#host.fs.stat(m.path).catch(() => undefined))?.size ?? 0;
          rows.set(m.path, { path: m.path, size, permission: this.#host.mayWrite(m.path) ? 'read-write' : 'read-only', loaded: false, dirty: false });
        }
      }
      for (const b of this.#open.values()) {
        if (options.pattern !== undefined && !rows.has(b.path)) continue;
        rows.set(b.path, { path: b.path, size: b.disk.file?.bytes.byteLength ?? 0, permission: b.permission, loaded: true, dirty: b.dirty });
      }
      return [...rows.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    });
  }

  /** The state of one buffer (a file not open yet is opened), or of every open one. */
  status(path?: string): Promise<BufferInfo[]> {
    if (path === undefined) {
      return this.#host.guard('buffers.status', '', {}, async () => {
        await this.#lookAll();
        return [...this.#open.values()].map((b) => this.#info(b, true));
      });
    }
    return this.#call('buffers.status', path, {}, async (p) => [this.#info(await this.#held(p), true)]);
  }

  /** Looks at the disk now for one buffer or all (what every call does first). */
  refresh(path?: string): Promise<BufferInfo[]> {
    if (path === undefined) {
      return this.#host.guard('buffers.refresh', '', {}, async () => {
        for (const b of [...this.#open.values()]) await this.#look(b, true);
        return [...this.#open.values()].map((b) => this.#info(b));
      });
    }
    return this.#call('buffers.refresh', path, {}, async (p) => {
      const b = this.#find(p);
      if (b === undefined) throw notOpen('buffers.refresh', p);
      await this.#look(b, true);
      return [this.#info(b)];
    });
  }

  /** The buffer's text and version. */
  text(path: string): Promise<{ readonly text: string; readonly bufferVersion: number }> {
    return this.#call('buffers.text', path, {}, async (p) => {
      const b = await this.#held(p);
      return { text: b.text, bufferVersion: b.version };
    });
  }

  /** Disk → buffer as a unified diff under a metadata header. */
  diff(path: string): Promise<BufferDiff> {
    return this.#call('buffers.diff', path, {}, async (p) => {
      const b = await this.#held(p);
      const d = bufferDiff(b);
      b.unseen = false;
      const mask = maskerOf(this.#host.redactor, [b.disk.file?.text, b.pending?.disk.file?.text, b.text]);
      return { ...d, text: mask(d.text), diff: mask(d.diff) };
    });
  }

  /** Discards the buffer's changes (and a pending conflict): it becomes the file on disk (a file not open yet is opened). */
  reload(path: string): Promise<BufferInfo> {
    return this.#call('buffers.reload', path, {}, async (p) => {
      const b = this.#find(p) ?? (await this.#load(p, {}));
      b.reload(await this.#snapshot(b.path));
      return this.#info(b);
    });
  }

  /** Settles a conflict: `disk` or `buffer` wins where both changed the same text; every other change is kept. */
  resolve(path: string, side: 'disk' | 'buffer'): Promise<BufferInfo> {
    return this.#call('buffers.resolve', path, { side }, async (p) => {
      const b = await this.#held(p);
      this.#settle(b, b.resolve(side));
      return this.#info(b);
    });
  }

  /**
   * Writes the buffer through the context layer's edit path. The disk is
   * looked at first and merged by the permission; a change that lands
   * between that look and the write is caught by compare-and-swap, merged
   * the same way, and the save tried again. A pending conflict refuses the
   * save unless `resolve` says which side wins it.
   */
  async save(path: string, options: { message?: string; resolve?: 'disk' | 'buffer' } = {}): Promise<BufferSave> {
    const p = await this.#resolve('buffers.save', path);
    const b = this.#find(p);
    if (b === undefined) throw notOpen('buffers.save', p);
    if (!canWriteBack(b.permission)) throw readOnly('buffers.save', b);
    let edit: EditResult | undefined;
    for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
      await this.#look(b, true);
      if (b.pending && options.resolve) this.#settle(b, b.resolve(options.resolve));
      if (b.pending) throw pendingConflict('buffers.save', b);
      if (!b.dirty) return { saved: edit?.success === true, buffer: this.#info(b), edit };
      const before = b.disk.file;
      const text = b.text;
      edit = await this.#host.writeFile(b.path, text, { baseVersion: before?.sha256, strategy: 'refuse', message: options.message });
      if (edit.success) {
        b.saved(await this.#written(b.path, text, before, edit.version), edit.seq);
        return { saved: true, buffer: this.#info(b), edit };
      }
      if (edit.code !== 'ECONFLICT') return { saved: false, buffer: this.#info(b), edit };
    }
    return { saved: false, buffer: this.#info(b), edit };
  }

  /**
   * Closes a buffer; one with unsaved changes only with `discard: true`.
   * Closing a path no buffer holds is done already: it answers `undefined`,
   * since the state asked for (edits of the file go to the disk) holds.
   *
   * @example
   * ```ts
   * const closed = await ctx.buffers.close('src/a.ts');
   * if (closed === undefined) console.log('no buffer was open');
   * ```
   */
  close(path: string, options: { discard?: boolean } = {}): Promise<BufferInfo | undefined> {
    return this.#call('buffers.close', path, { ...options }, async (p) => {
      const b = this.#find(p);
      if (b === undefined) return undefined;
      if ((b.dirty || b.pending) && options.discard !== true) {
        throw fsError('EBUSY', 'buffers.close', p, {
          reason: `${p} has unsaved changes${b.pending ? ' and a conflict with the disk' : ''}`,
          hint: `save them with ${callText('buffers.save', [p])}, or close with ${callText('buffers.close', [p], { discard: true })} to drop them`,
        });
      }
      if (b.overwritten !== undefined && b.keepsOverwritten && options.discard !== true) {
        // The buffer reads clean, but it alone still holds the agent's text the disk won over.
        throw fsError('EBUSY', 'buffers.close', p, {
          reason: `the buffer of ${p} keeps your text at ${placesText(b.overwritten)}, which a change on disk replaced; closing it would drop that text`,
          hint: `bring it back with ${callText('buffers.undo', [p], { overwritten: true })} and save, or close with ${callText('buffers.close', [p], { discard: true })} to drop it`,
        });
      }
      const info = this.#info(b);
      this.#open.delete(b.path);
      this.#renamedFrom.delete(b);
      this.#last.delete(b);
      return info;
    });
  }

  /** Applies one of the context layer's edit operations to the buffer (not to disk). */
  async edit(path: string, op: BufferEditOp, options: BufferEditOptions = {}): Promise<BufferInfo> {
    return (await this.change(path, op, options)).buffer;
  }

  /** {@link edit}, answering with the text and content hash before and after as well. */
  change(path: string, op: BufferEditOp, options: BufferEditOptions = {}): Promise<BufferChange> {
    return this.#call(`buffers.${op.kind}`, path, { ...op, ...options }, async (p) => {
      const overwrittenBefore = this.#find(p)?.overwritten;
      const b = await this.#held(p);
      if (!canWriteBack(b.permission)) throw readOnly(`buffers.${op.kind}`, b);
      if (options.bufferVersion !== undefined && options.bufferVersion !== b.version) {
        throw fsError('ECONFLICT', 'edit', p, {
          reason: `the buffer is at version ${b.version}, not ${options.bufferVersion}: a change on disk was merged into it since`,
          hint: `see what changed with ${callText('buffers.diff', [p])} and redo the edit against the buffer as it is`,
        });
      }
      const before = b.text;
      const previousVersion = contentHash(b);
      const base = options.baseVersion;
      if (base !== undefined && !/^[0-9a-f]{6,64}$/i.test(base)) {
        throw fsError('EINVAL', 'edit', p, {
          reason: `${JSON.stringify(base)} is not a version id`,
          hint: `pass the 64-hex-digit hash (or a prefix of 6+ digits) a read returned as its version, or leave the base out`,
        });
      }
      if (base !== undefined && !previousVersion.startsWith(base.toLowerCase())) {
        throw fsError('ECONFLICT', 'edit', p, {
          reason: `the open buffer of ${p} is not the version ${base.slice(0, 12)} the edit was made from (a change on disk was merged into it, or it was read before it was opened); nothing was changed`,
          hint: `read the buffer as it is now with ${callText('readFile', [p])} and redo the edit against it`,
        });
      }
      const mask = maskerOf(this.#host.redactor, [before, b.disk.file?.text]);
      let edited: string;
      try {
        edited = applyBufferEdit(before, op, p);
      } catch (err) {
        // A refused patch quotes the buffer's lines.
        if (!isFsError(err)) throw err;
        throw fsError(err.code, err.op, err.path, { reason: mask(err.reason), hint: mask(err.hint) });
      }
      const served = this.#host.redactor?.servedMaskIn(before, edited);
      if (served !== undefined) throw fsError('EINVAL', 'edit', p, servedMaskRefusal(p, served));
      b.edit(op.kind, edited);
      const after = b.text;
      const version = contentHash(b);
      await this.#autoSave(b);
      // An edit's result is always served: its note is said there.
      const overwritten = unsaidNote(b, overwrittenBefore);
      b.overwrittenUnsaid = false;
      return { buffer: this.#info(b), before, after, previousVersion, version, overwritten };
    });
  }

  /** Whether `path` is open in a buffer of this session (under its name or the name it had before a rename on disk). */
  isOpen(path: string): boolean {
    if (this.#open.size === 0) return false;
    try {
      return this.#find(this.#path('buffers', path)) !== undefined;
    } catch {
      return false; // a path that does not normalize is no buffer's
    }
  }

  /**
   * The open buffer's content, after a look at the disk; `undefined` when
   * `path` is not open. Not a guarded call of its own: the session's read
   * that serves it is the call (policy, audit and budget apply to it).
   */
  async content(path: string): Promise<BufferContent | undefined> {
    if (!this.isOpen(path)) return undefined;
    const b = this.#find(this.#path('buffers', path)) as FileBuffer;
    const overwrittenBefore = b.overwritten;
    await this.#look(b, false);
    // Every read of an open buffer passes here: the note is made when this look overwrote something, and made
    // again until a read serves it (a read refused for its budget took the change in and said nothing).
    const overwritten = unsaidNote(b, overwrittenBefore);
    const said = () => {
      b.overwrittenUnsaid = false;
    };
    return {
      path: b.path,
      bytes: encodeLike(b.text, b.disk.file),
      text: b.text,
      mtime: b.disk.mtime,
      bufferVersion: b.version,
      dirty: b.dirty,
      overwritten,
      said,
    };
  }

  /** Replaces exact text in the buffer (unique by default; `first`, `all`, a 1-based number, or `regex`). */
  replace(
    path: string,
    search: string,
    replacement: string,
    options: BufferEditOptions & { occurrence?: 'unique' | 'first' | 'all' | number; regex?: boolean; flags?: string } = {},
  ): Promise<BufferInfo> {
    const { bufferVersion, ...replace } = options;
    return this.edit(path, { kind: 'replace', search, replacement, options: replace }, { bufferVersion });
  }

  /**
   * Reverts the buffer's newest unsaved edit, keeping changes merged in from
   * disk since. `overwritten`: instead, puts back the agent's text the
   * newest merge from disk replaced (read-write lets the disk win where
   * both changed the same text), wherever it is among the edits.
   */
  undo(path: string, options: { overwritten?: boolean } = {}): Promise<BufferInfo> {
    return this.#step(options.overwritten === true ? 'restore' : 'undo', path);
  }

  /** Applies the newest undone edit again. */
  redo(path: string): Promise<BufferInfo> {
    return this.#step('redo', path);
  }

  #step(direction: 'undo' | 'redo' | 'restore', path: string): Promise<BufferInfo> {
    const op = direction === 'restore' ? 'buffers.undo' : `buffers.${direction}`;
    return this.#call(op, path, direction === 'restore' ? { overwritten: true } : {}, async (p) => {
      const b = await this.#held(p);
      const done = direction === 'restore' ? b.restoreOverwritten() : b.step(direction);
      if (!done) {
        if (direction === 'restore') throw nothingOverwritten(p, b);
        // Asked at the refusal, not remembered from the save: the saved change may be undone on disk since.
        throw nothingToStep(direction, p, b, direction === 'undo' ? await this.#host.ownUndo?.(p) : undefined);
      }
      await this.#autoSave(b);
      return this.#info(b);
    });
  }

  /** Paths of the open buffers. */
  get paths(): string[] {
    return [...this.#open.keys()];
  }

  /** Closes every buffer (unsaved changes are dropped) and this session's feed of changes. */
  dispose(): void {
    this.#open.clear();
    this.#feed?.close();
    this.#feed = undefined;
  }

  // ---------------------------------------------------------------- internals

  #path(op: string, path: string): string {
    // With the root's absolute spellings, an absolute path inside it is refused naming the relative one, as elsewhere.
    return contextPath(path, op, 'file', rootSpellings(this.#host.fs));
  }

  async #resolve(op: string, path: string): Promise<string> {
    const p = this.#path(op, path);
    return (await this.#host.resolve?.(p)) ?? p;
  }

  async #call<T>(op: string, path: string, params: Record<string, unknown>, body: (p: string) => Promise<T>): Promise<T> {
    const p = await this.#resolve(op, path);
    return this.#host.guard(op, p, params, () => body(p));
  }

  /** The open buffer of `p`, after a look at the disk. */
  async #held(p: string): Promise<FileBuffer> {
    const b = this.#find(p);
    if (b === undefined) return await this.#load(p, {});
    await this.#look(b, false);
    return b;
  }

  /** A new buffer of `p` (a status, diff or edit of a file not open yet opens it with the default permission). */
  async #load(p: string, options: OpenBufferOptions): Promise<FileBuffer> {
    void this.#changes;
    const permission = this.#allowed(p, options.permission ?? 'read-write');
    const snapshot = await this.#snapshot(p);
    if (snapshot.file === undefined) {
      throw fsError('ENOENT', 'buffers.open', p, {
        reason: `${p} does not exist`,
        hint: `check the path with ${callText('glob', [`**/${p.split('/').pop()}`])}`,
      });
    }
    const buffer = new FileBuffer(p, permission, snapshot, options.autoSave ?? false);
    this.#open.set(p, buffer);
    return buffer;
  }

  /** `permission`, validated, and lowered to `read-only` where the policy denies this agent writes. */
  #allowed(p: string, permission: SyncPermission): SyncPermission {
    if (!SYNC_PERMISSIONS.includes(permission)) {
      throw fsError('EINVAL', 'buffers.open', p, {
        reason: `unknown permission ${JSON.stringify(permission)}`,
        hint: `use one of ${SYNC_PERMISSIONS.join(', ')}`,
      });
    }
    return canWriteBack(permission) && !this.#host.mayWrite(p) ? 'read-only' : permission;
  }

  /** The buffer of `p`, or of a file that was at `p` before a rename on disk (a call may still use the old name). */
  #find(p: string): FileBuffer | undefined {
    const b = this.#open.get(p);
    if (b !== undefined) return b;
    for (const [buffer, from] of this.#renamedFrom) if (from === p && this.#open.get(buffer.path) === buffer) return buffer;
    return undefined;
  }

  async #lookAll(): Promise<void> {
    const changed = await this.#changes.take(this.paths);
    for (const c of changed) {
      const b = this.#open.get(c.path);
      if (b) await this.#look(b, true, c.renamedTo);
    }
  }

  /** Takes in what changed on disk; `force` looks whatever the source says. */
  async #look(b: FileBuffer, force: boolean, renamedTo?: string): Promise<void> {
    if (!force) {
      const [change] = await this.#changes.take([b.path]);
      if (change === undefined) return;
      renamedTo = change.renamedTo;
    }
    let now = await this.#snapshot(b.path);
    if (now.file === undefined && b.disk.file !== undefined) {
      const moved = renamedTo ?? (await this.#findMoved(b));
      if (moved !== undefined && !this.#open.has(moved)) {
        this.#open.delete(b.path);
        this.#renamedFrom.set(b, b.path);
        b.path = moved;
        this.#open.set(moved, b);
        now = await this.#snapshot(moved);
      }
    }
    const outcome = b.sync(now);
    if (!this.#settle(b, outcome)) return;
    await this.#host.diskChanged?.(b.path).catch(() => undefined);
    await this.#autoSave(b);
  }

  /** Keeps what a look at the disk or a resolve did, for the buffer's state to report; whether it changed anything. */
  #settle(b: FileBuffer, outcome: SyncOutcome): boolean {
    if (outcome.changed) this.#last.set(b, outcome);
    return outcome.changed;
  }

  /** A file next to a vanished one holding exactly its last content: it was renamed. */
  async #findMoved(b: FileBuffer): Promise<string | undefined> {
    const gone = b.disk.file;
    if (gone === undefined) return undefined;
    const fs = this.#host.fs;
    const entries = await fs.list(parentPath(b.path), { stat: true }).catch(() => []);
    for (const e of entries) {
      if (e.kind !== 'file' || e.stat?.size !== gone.bytes.byteLength || this.#open.has(e.path)) continue;
      const bytes = await fs.readBytes(e.path).catch(() => undefined);
      if (bytes !== undefined && sha256Hex(bytes) === gone.sha256) return e.path;
    }
    return undefined;
  }

  async #autoSave(b: FileBuffer): Promise<void> {
    if (!b.autoSave || b.pending || !b.dirty) return;
    await this.save(b.path).catch((err: unknown) => {
      // A refused auto-save leaves the buffer modified; its status says so.
      if (!isFsError(err)) throw err;
    });
  }

  async #snapshot(path: string): Promise<DiskSnapshot> {
    const fs = this.#host.fs;
    const file = await loadFileText(fs, path, 'buffers');
    const mtime =
      file === undefined
        ? undefined
        : await fs.stat(path).then(
            (s) => s.mtime,
            () => undefined,
          );
    return { file, mtime };
  }

  /** The disk as our save left it: what was written, not a change someone made right after. */
  async #written(path: string, text: string, before: DiskSnapshot['file'], version: string | undefined): Promise<DiskSnapshot> {
    const bytes = encodeLike(text, before);
    if (version !== undefined && sha256Hex(bytes) !== version) return await this.#snapshot(path);
    const mtime = await this.#host.fs.stat(path).then(
      (s) => s.mtime,
      () => undefined,
    );
    return { file: decodeFile(this.#host.fs, path, bytes), mtime };
  }

  #info(b: FileBuffer, seen = false): BufferInfo {
    const last = this.#last.get(b);
    const status = b.status;
    if (seen) b.unseen = false;
    return {
      path: b.path,
      permission: b.permission,
      status,
      dirty: b.dirty,
      bufferVersion: b.version,
      diskVersion: b.disk.file?.sha256,
      diskMtime: b.disk.mtime?.toISOString(),
      // A conflict waiting for the agent already knows what the disk holds now.
      onDisk: (b.pending?.disk ?? b.disk).file !== undefined,
      autoSave: b.autoSave,
      collisions: b.pending?.collisions.length ?? 0,
      undo: b.history.depth.undo,
      redo: b.history.depth.redo,
      savedSeq: b.savedSeq,
      renamedFrom: this.#renamedFrom.get(b),
      settled: last?.settled.length ?? 0,
      winner: last?.winner,
      overwritten: b.overwritten === undefined ? undefined : overwrittenNote(b.path, b.overwritten, b.history),
      next:
        status === 'conflict'
          ? callText('buffers.diff', [b.path])
          : status === 'disk_changed' && b.disk.file !== undefined
            ? callText('buffers.diff', [b.path])
            : undefined,
    };
  }
}

/**
 * The note of overwritten text a call must say: what its look (from
 * `before`) overwrote, or what an earlier call took in and no call has said
 * yet (`overwrittenUnsaid`); nothing once the text is back or dropped.
 */
function unsaidNote(b: FileBuffer, before: FileBuffer['overwritten']): string | undefined {
  if (b.overwritten !== undefined && b.overwritten !== before) b.overwrittenUnsaid = true;
  return b.overwrittenUnsaid && b.overwritten !== undefined ? overwrittenNote(b.path, b.overwritten, b.history) : undefined;
}

/** The buffer's content hash as its file would hold it (a clean buffer's is the disk's). */
function contentHash(b: FileBuffer): string {
  return b.dirty || b.disk.file === undefined ? sha256Hex(encodeLike(b.text, b.disk.file)) : b.disk.file.sha256;
}

function notOpen(op: string, path: string) {
  return fsError('ENOENT', op, path, { reason: `no buffer is open for ${path}`, hint: `open it first with ${callText('buffers.open', [path])}` });
}

function readOnly(op: string, b: FileBuffer) {
  return fsError('EPERM', op, b.path, {
    reason: `the buffer of ${b.path} is read-only (it follows the disk; the agent cannot change it)`,
    hint: `open it again with a writable permission, if the policy allows: ${callText('buffers.open', [b.path], { permission: 'read-write' })}`,
  });
}

function pendingConflict(op: string, b: FileBuffer) {
  const n = b.pending?.collisions.length ?? 0;
  return fsError('ECONFLICT', op, b.path, {
    reason: `${b.path} changed on disk where the buffer changed it too (${plural(n, 'place')}); nothing was written`,
    hint: `see both with ${callText('buffers.diff', [b.path])}, then save choosing who wins those places (${callText('buffers.save', [b.path], { resolve: 'disk' })} or resolve "buffer"), or drop the buffer's changes with ${callText('buffers.reload', [b.path])}`,
  });
}

/** The refusal of an undo of overwritten text when no merge overwrote any (or it was brought back). */
function nothingOverwritten(p: string, b: FileBuffer): FsError {
  return fsError('EINVAL', 'undo', p, {
    reason: `nothing to bring back in the buffer of ${p}: no merge from disk has replaced text of yours since it was last brought back, reloaded or undone`,
    hint: b.history.depth.undo > 0 ? `to revert your newest edit instead: ${callText('buffers.undo', [p])}` : 'the buffer has no edit left to undo',
  });
}

/**
 * The refusal of an undo or redo with nothing to step. It names a call only
 * when that call does something: the disk's undo when the file history has
 * a change of this agent left to revert (`onDisk`, asked now: a saved
 * change undone on disk since is not offered again), the buffer's undo
 * when a redo finds nothing undone but an edit is there to undo.
 */
function nothingToStep(direction: 'undo' | 'redo', p: string, b: FileBuffer, onDisk?: OwnUndo): FsError {
  const { undo, redo } = b.history.depth;
  if (direction === 'undo') {
    const redoable = redo > 0 ? ` (${plural(redo, 'undone edit')} can be applied again with redo)` : '';
    return fsError('EINVAL', direction, p, {
      reason: `nothing to undo in the buffer of ${p}: no edit of it is left to undo${redoable}`,
      hint:
        onDisk !== undefined && onDisk.refused === undefined
          ? `a saved change is undone on disk, through the file history: ${callText('undo', [p])} reverts your newest one there, #${onDisk.seq} (${onDisk.op})`
          : onDisk !== undefined
            ? `your newest change on disk, #${onDisk.seq} (${onDisk.op}), cannot be undone on its own now: ${onDisk.refused === 'ECONFLICT' ? 'later changes touch the same lines' : `undo refuses it (${onDisk.refused})`}; ${callText('history', [p])} lists the versions`
            : b.savedSeq !== undefined
              ? 'what this buffer saved is undone on disk already: no change of yours is left there to undo'
              : 'a change saved to disk is undone through the file history, not in the buffer',
    });
  }
  return fsError('EINVAL', direction, p, {
    reason: `nothing to redo in the buffer of ${p}: no edit was undone since its last edit`,
    hint:
      undo > 0
        ? `redo applies an edit undone since the last edit; undo one first with ${callText('buffers.undo', [p])}`
        : 'the buffer has no edit left to undo or redo',
  });
}
