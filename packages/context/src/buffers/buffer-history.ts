/**
 * A buffer's own undo/redo over the agent's unsaved edits. An undo reverts
 * one edit on top of what the buffer holds now — like `git revert`, not a
 * jump back — so a change from disk merged in after that edit is kept, and a
 * save after an undo never drops the person's work. Saved states are also
 * versions in the context layer's history; this covers the unsaved ones.
 *
 * @module
 */

import { mergeSides } from './merge-sides.ts';

/** One edit of a buffer: its text before and after. */
export interface BufferEdit {
  readonly before: string;
  readonly after: string;
  /** The operation that made it (`replace`, `editLines`, `patch`, `splice`...). */
  readonly cause: string;
}

/** Edits kept per buffer; the oldest go first. */
const DEPTH = 200;

/**
 * Undo and redo stacks of edits; a new edit clears the redo stack.
 *
 * @example
 * ```ts
 * const h = new BufferHistory();
 * h.record({ before: 'a\n', after: 'b\n', cause: 'replace' });
 * h.undo('b\nfrom disk\n'); // 'a\nfrom disk\n'
 * ```
 */
export class BufferHistory {
  readonly #undo: BufferEdit[] = [];
  readonly #redo: BufferEdit[] = [];

  /**
   * Records an edit the agent made. `keepRedo`: a change the agent did not
   * make (a merge that overwrote its text), so the edits it undid are still
   * there to redo.
   */
  record(edit: BufferEdit, options: { keepRedo?: boolean } = {}): void {
    if (edit.before === edit.after) return;
    this.#undo.push(edit);
    if (this.#undo.length > DEPTH) this.#undo.shift();
    if (options.keepRedo !== true) this.#redo.length = 0;
  }

  /** How many undos revert `edit` (1: it is the newest); `undefined` when it is no longer on the undo stack. */
  undosTo(edit: BufferEdit): number | undefined {
    const at = this.#undo.lastIndexOf(edit);
    return at < 0 ? undefined : this.#undo.length - at;
  }

  /** Drops `edit` from the undo stack (its revert was made out of turn). */
  forget(edit: BufferEdit): void {
    const at = this.#undo.lastIndexOf(edit);
    if (at >= 0) this.#undo.splice(at, 1);
  }

  /** Whether `edit` was undone and not applied again since. */
  undone(edit: BufferEdit): boolean {
    return this.#redo.includes(edit);
  }

  /** `current` with the newest edit reverted; `undefined` when there is none. */
  undo(current: string): string | undefined {
    const edit = this.#undo.pop();
    if (edit === undefined) return undefined;
    this.#redo.push(edit);
    // The revert wins where later text touches it: the agent asked for exactly this edit to go.
    return mergeSides(edit.after, current, edit.before, 'disk').text;
  }

  /** `current` with the newest undone edit applied again; `undefined` when there is none. */
  redo(current: string): string | undefined {
    const edit = this.#redo.pop();
    if (edit === undefined) return undefined;
    this.#undo.push(edit);
    return mergeSides(edit.before, current, edit.after, 'disk').text;
  }

  /** Forgets every edit (a reload discards them). */
  clear(): void {
    this.#undo.length = 0;
    this.#redo.length = 0;
  }

  /** How many undos and redos are possible. */
  get depth(): { readonly undo: number; readonly redo: number } {
    return { undo: this.#undo.length, redo: this.#redo.length };
  }
}
