/**
 * One open file: the agent's text, the disk state it was last in step with
 * (the merge base), and the rule that settles what both sides changed. It
 * does no I/O; the buffer set hands it what the disk holds now.
 *
 * @module
 */

import type { FileText } from '../edits/file-text.ts';
import { BufferHistory } from './buffer-history.ts';
import { type Collision, mergeSides } from './merge-sides.ts';
import { type OverwrittenText, placesDiffering } from './overwritten-text.ts';
import { canWriteBack, collisionRule, type SyncPermission } from './sync-permission.ts';

/** The file on disk at one moment. */
export interface DiskSnapshot {
  /** `undefined`: the file is absent. */
  readonly file: FileText | undefined;
  readonly mtime: Date | undefined;
}

/** The four states of seed 003. */
export type BufferStatusKind = 'clean' | 'modified' | 'disk_changed' | 'conflict';

/** A change on disk both sides touched, waiting for the agent (permission `human`/`partner`). */
export interface PendingConflict {
  readonly disk: DiskSnapshot;
  readonly collisions: readonly Collision[];
}

/** What one look at the disk did to a buffer. */
export interface SyncOutcome {
  /** The disk had changed since the buffer last took it in. */
  readonly changed: boolean;
  /** Collisions settled by the permission's rule (`disk` or `buffer` won them). */
  readonly settled: readonly Collision[];
  readonly winner: 'disk' | 'buffer' | undefined;
  /** Collisions left for the agent. */
  readonly pending: boolean;
}

const NOTHING: SyncOutcome = { changed: false, settled: [], winner: undefined, pending: false };

function sameDisk(a: DiskSnapshot, b: DiskSnapshot): boolean {
  return a.file?.sha256 === b.file?.sha256;
}

/**
 * A buffer's state and its merge rules.
 *
 * @example
 * ```ts
 * const b = new FileBuffer('a.txt', 'read-write', { file, mtime });
 * b.edit('replace', 'new text');
 * b.sync({ file: changedOnDisk, mtime }); // merged; the disk wins where both changed the same text
 * ```
 */
export class FileBuffer {
  path: string;
  permission: SyncPermission;
  autoSave: boolean;
  text: string;
  /** The disk as the buffer last took it in: the base of the next merge. */
  disk: DiskSnapshot;
  /** Counts every change of `text`. */
  version = 1;
  readonly history = new BufferHistory();
  pending: PendingConflict | undefined;
  /** A change on disk was merged in since the agent last asked for this buffer's status. */
  unseen = false;
  /** History position of the last save. */
  savedSeq: number | undefined;
  /**
   * What the newest merge that settled collisions overwrote: kept until an
   * undo or {@link restoreOverwritten} brings the agent's text back, a
   * reload drops the buffer's changes, or a later merge overwrites text
   * again.
   */
  overwritten: OverwrittenText | undefined;
  /**
   * A read's look took in a change that overwrote text, and no read has
   * served the note of it yet (a read refused for its budget served none):
   * the next read says it.
   */
  overwrittenUnsaid = false;
  /** Collisions settled by the rule or left to the agent, since open. */
  readonly tally = { merges: 0, settledForDisk: 0, settledForBuffer: 0, surfaced: 0 };

  constructor(path: string, permission: SyncPermission, disk: DiskSnapshot, autoSave = false) {
    this.path = path;
    this.permission = permission;
    this.autoSave = autoSave && canWriteBack(permission);
    this.disk = disk;
    this.text = disk.file?.text ?? '';
  }

  /** The buffer keeps the agent's text a merge gave to the disk, one {@link restoreOverwritten} away: like unsaved changes, closing drops it. */
  get keepsOverwritten(): boolean {
    const entry = this.overwritten?.entry;
    return entry !== undefined && this.history.undosTo(entry) !== undefined;
  }

  /** The buffer holds changes the disk does not. */
  get dirty(): boolean {
    return this.text !== (this.disk.file?.text ?? '');
  }

  get status(): BufferStatusKind {
    if (this.pending) return 'conflict';
    if (this.unseen || this.disk.file === undefined) return 'disk_changed';
    return this.dirty ? 'modified' : 'clean';
  }

  /** Sets the text (an edit, an undo, a merge), counting a version. */
  #set(text: string): void {
    if (text === this.text) return;
    this.text = text;
    this.version++;
  }

  /** An agent's edit; the caller has checked the permission. */
  edit(cause: string, text: string): void {
    this.history.record({ before: this.text, after: text, cause });
    this.#set(text);
  }

  /** Reverts the newest edit (or applies the newest undone one again); `false` when there is none. */
  step(direction: 'undo' | 'redo'): boolean {
    const text = direction === 'undo' ? this.history.undo(this.text) : this.history.redo(this.text);
    if (text === undefined) return false;
    this.#set(text);
    return true;
  }

  /** Discards the buffer's changes and any pending conflict: the text becomes the disk's. */
  reload(now: DiskSnapshot): void {
    this.disk = now;
    this.pending = undefined;
    this.unseen = false;
    this.overwritten = undefined;
    this.history.clear();
    this.#set(now.file?.text ?? '');
  }

  /** The disk after our own save: the new merge base (an edit made while the save ran stays in the buffer). */
  saved(now: DiskSnapshot, seq: number | undefined): void {
    this.disk = now;
    this.savedSeq = seq;
  }

  /**
   * Takes in what the disk holds now: a clean buffer follows it; a modified
   * one is merged with it, and text both sides changed goes to the side the
   * permission names — or, for `human`/`partner`, waits for the agent.
   */
  sync(now: DiskSnapshot): SyncOutcome {
    if (sameDisk(now, this.disk)) return NOTHING;
    if (this.pending && sameDisk(now, this.pending.disk)) return { ...NOTHING, pending: true };
    this.unseen = true;
    if (!this.dirty) return this.#take(now, now.file?.text ?? '', [], undefined);
    this.tally.merges++;
    const rule = collisionRule(this.permission);
    const base = this.disk.file?.text ?? '';
    // The file went from the disk under unsaved edits: whatever the rule, the edits are kept (a save
    // makes the file again); a deletion on disk never erases work nobody saved.
    const deleted = now.file === undefined;
    const merged = deleted
      ? { text: this.text, collisions: [{ start: 0, end: base.length, base, buffer: this.text, disk: '' }] }
      : mergeSides(base, this.text, now.file.text, rule);
    if (merged.collisions.length > 0 && rule === 'ask') {
      this.pending = { disk: now, collisions: merged.collisions };
      this.tally.surfaced += merged.collisions.length;
      return { changed: true, settled: [], winner: undefined, pending: true };
    }
    return this.#take(now, merged.text, merged.collisions, rule === 'ask' ? undefined : deleted ? 'buffer' : rule);
  }

  /**
   * Settles a pending conflict the way the agent chose: `disk` or `buffer`
   * wins where both changed the same text; every other change of both is kept.
   */
  resolve(side: 'disk' | 'buffer'): SyncOutcome {
    const pending = this.pending;
    if (pending === undefined) return NOTHING;
    const base = this.disk.file?.text ?? '';
    const text = pending.disk.file === undefined ? (side === 'disk' ? '' : this.text) : mergeSides(base, this.text, pending.disk.file.text, side).text;
    return this.#take(pending.disk, text, pending.collisions, side);
  }

  /**
   * Puts back the agent's text the newest merge gave to the disk, on top of
   * what the buffer holds now (later edits and later changes from disk
   * stay), as one edit an undo reverts; `false` when there is none.
   */
  restoreOverwritten(): boolean {
    const entry = this.overwritten?.entry;
    if (entry === undefined || !this.keepsOverwritten) return false;
    // A revert of that one merge, as an undo reverts one edit.
    const text = mergeSides(entry.after, this.text, entry.before, 'disk').text;
    this.history.forget(entry);
    this.overwritten = undefined;
    this.edit('restore', text);
    return true;
  }

  #take(now: DiskSnapshot, text: string, collisions: readonly Collision[], winner: 'disk' | 'buffer' | undefined): SyncOutcome {
    if (winner === 'disk') this.tally.settledForDisk += collisions.length;
    if (winner === 'buffer') this.tally.settledForBuffer += collisions.length;
    const overwritten = winner !== undefined && collisions.length > 0 && now.file !== undefined ? this.#overwritten(now.file.text, text, winner) : undefined;
    this.pending = undefined;
    this.disk = now;
    this.#set(text);
    if (overwritten !== undefined) {
      // The agent's text the disk won over stays one revert away: an undo entry, as if the merge were an edit.
      if (overwritten.entry) this.history.record(overwritten.entry, { keepRedo: true });
      this.overwritten = overwritten;
    }
    return { changed: true, settled: collisions, winner, pending: false };
  }

  /** The losing side's text, called before `merged` is taken: the same merge with the other side winning is what it would have been. */
  #overwritten(disk: string, merged: string, winner: 'disk' | 'buffer'): OverwrittenText | undefined {
    const other = mergeSides(this.disk.file?.text ?? '', this.text, disk, winner === 'disk' ? 'buffer' : 'disk').text;
    if (other === merged) return undefined;
    const side = winner === 'disk' ? 'buffer' : 'disk';
    const entry = side === 'buffer' ? { before: other, after: merged, cause: 'merge' } : undefined;
    return { side, places: placesDiffering(merged, other), entry };
  }
}
