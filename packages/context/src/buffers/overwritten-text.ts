/**
 * The text one side lost when a merge settled what both the buffer and the
 * disk changed by the permission's rule: where it was, and how it comes
 * back. Read-write lets the disk win, so the agent's text there is kept as
 * an entry of the buffer's undo history (reverting it brings the text back
 * on top of whatever the buffer holds by then); admin lets the agent win,
 * and the save that writes over the disk's text records it in the file
 * history first (an `external` version, or the file's `initial` one when
 * history knew nothing of the file), as every write through the edit path
 * does. Which side wins stays policy;
 * neither side's text is ever dropped without a way back.
 *
 * @module
 */

import { diffLines } from 'diff';
import { callText } from '../calls/call-text.ts';
import { plural } from '../search/narrowing.ts';
import type { BufferEdit, BufferHistory } from './buffer-history.ts';

/** What the last settled merge overwrote. */
export interface OverwrittenText {
  /** Whose text lost: the agent's (`buffer`, the disk won) or the disk's (`disk`, the agent won). */
  readonly side: 'buffer' | 'disk';
  /** Where, as lines of the buffer right after the merge: `line 3`, `lines 5-7`, `before line 9`. */
  readonly places: readonly string[];
  /** The undo entry whose revert brings the agent's text back (side `buffer`). */
  readonly entry: BufferEdit | undefined;
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/**
 * The places where `now` differs from `other`, as lines of `now`.
 *
 * @example
 * ```ts
 * placesDiffering('a\nB\nc\n', 'a\nb\nc\n'); // ['line 2']
 * ```
 */
export function placesDiffering(now: string, other: string): string[] {
  const places: string[] = [];
  const total = lineCount(now);
  let line = 1;
  let open: { from: number; to: number } | undefined;
  const close = () => {
    if (open === undefined) return;
    const { from, to } = open;
    places.push(to < from ? (from > total ? 'at the end' : `before line ${from}`) : to === from ? `line ${from}` : `lines ${from}-${to}`);
    open = undefined;
  };
  for (const part of diffLines(now, other)) {
    const n = lineCount(part.value);
    if (!part.added && !part.removed) {
      close();
      line += n;
      continue;
    }
    open ??= { from: line, to: line - 1 };
    if (part.removed) {
      line += n;
      open.to = line - 1;
    }
  }
  close();
  return places;
}

/**
 * The places, briefly: the first three and how many more.
 *
 * @example
 * ```ts
 * placesText(lost); // 'line 2, lines 5-7, before line 9 and 2 more places'
 * ```
 */
export function placesText(lost: OverwrittenText): string {
  const { places } = lost;
  return places.length <= 3 ? places.join(', ') : `${places.slice(0, 3).join(', ')} and ${plural(places.length - 3, 'more place')}`;
}

/**
 * The sentence a buffer's state carries about overwritten text: which
 * places, whose text, and the call that brings it back (written in the
 * caller's style); `undefined` once the agent's text was brought back.
 *
 * @example
 * ```ts
 * overwrittenNote('a.txt', lost, history);
 * // 'your text at line 2 was replaced by the disk's; it is kept: buffers.undo("a.txt", {overwritten: true}) brings it back into the buffer (then save)'
 * ```
 */
export function overwrittenNote(path: string, lost: OverwrittenText, history: BufferHistory): string | undefined {
  const where = placesText(lost);
  if (lost.side === 'disk') {
    return `the disk's text at ${where} was replaced by yours; the save that writes over it records the disk's content first, as the version before yours in the file history: ${callText('history', [path])} lists it`;
  }
  if (lost.entry === undefined) return undefined;
  if (history.undone(lost.entry)) return undefined;
  const head = `your text at ${where} was replaced by the disk's`;
  if (history.undosTo(lost.entry) === undefined) return `${head}; it is no longer in the buffer's undo history`;
  return `${head}; it is kept: ${callText('buffers.undo', [path], { overwritten: true })} brings it back into the buffer (then save)`;
}

/**
 * `then`, after the note of text a change on disk overwrote as this call
 * took it in (an edit's message, a read's `next`): told first, as it
 * happened first, so a model following the calls in order brings its text
 * back before it saves or reads on.
 */
export function mergedFirst(overwritten: string | undefined, then: string): string;
export function mergedFirst(overwritten: string | undefined, then: string | undefined): string | undefined;
export function mergedFirst(overwritten: string | undefined, then: string | undefined): string | undefined {
  if (overwritten === undefined) return then;
  const note = `A change on disk was merged in first: ${overwritten}.`;
  return then === undefined ? note : `${note} ${then}`;
}
