/**
 * The programs under way over each filesystem, and the files each is
 * changing. A program writes the backend directly and records what it
 * changed only when it ends, so until then its writes are content history
 * does not know. Another agent reading such a file in the meantime (every
 * edit reads the file first) must not take it for a change made behind
 * ctxfs's back: recorded as `external`, the program's change would be split
 * between an outside version and its own, and undoing the program would
 * revert only part of it. The reader asks here whose it is instead.
 *
 * @module
 */

import type { Filesystem } from '@ctxfs/core';
import type { StoredContent } from '../edits/file-editor.ts';

/** A program under way, as a reader of one of its files needs it. */
export interface ProgramInFlight {
  /** The agent running it: the author of its versions. */
  readonly author: string;
  /** Its versions' message (the command line). */
  readonly message: string;
  /** The change id all its versions share: undo reverts them together. */
  readonly changeId: string;
  /** The content of `path` before the program's first change of it (`null`: absent); `undefined` for a file it has not touched. */
  before(path: string): StoredContent | null | undefined;
}

/** Keyed by the backend the programs write: every session of a workspace shares it. */
const underWay = new WeakMap<Filesystem, Set<ProgramInFlight>>();

/** Registers `program` as running over `fs` until {@link programEnded}. */
export function programStarted(fs: Filesystem, program: ProgramInFlight): void {
  const set = underWay.get(fs) ?? new Set();
  underWay.set(fs, set.add(program));
}

export function programEnded(fs: Filesystem, program: ProgramInFlight): void {
  underWay.get(fs)?.delete(program);
}

/** The program under way over `fs` that is changing `path`, if any. */
export function programChanging(fs: Filesystem, path: string): ProgramInFlight | undefined {
  for (const program of underWay.get(fs) ?? []) if (program.before(path) !== undefined) return program;
  return undefined;
}
