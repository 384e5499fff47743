/**
 * A patch's text as lines, before either format reads it: what models wrap a
 * patch in is taken off (a ``` or ~~~ code fence, an `apply_patch <<'EOF'`
 * heredoc, when it surrounds the whole patch), and a patch whose own line
 * breaks are CRLF loses one `\r` a line. A `\r` left after that belongs to
 * the content: the patch states that line's CRLF ending.
 *
 * @module
 */

import { PatchParseError } from './hunk-syntax.ts';

/** Patch lines with the offset that turns an index into a line number of the patch as given. */
export interface PatchText {
  readonly lines: readonly string[];
  /** Lines taken off the top (an opening fence); `lines[i]` is patch line `i + 1 + skipped`. */
  readonly skipped: number;
}

const FENCE = /^\s*(`{3,}|~{3,})[\w.+-]*\s*$/;
const HEREDOC = /^\s*(?:\S+\s+)?<<-?\s*(['"]?)([A-Za-z_]\w*)\1\s*$/;
// Lines only the patch's own structure writes; content lines always carry a prefix.
const STRUCTURE = /^(?:@@|\*\*\* |diff --git )/;

function unwrap(lines: string[]): { lines: string[]; skipped: number } {
  let first = 0;
  while (first < lines.length && (lines[first] as string).trim() === '') first++;
  let last = lines.length - 1;
  while (last > first && (lines[last] as string).trim() === '') last--;
  if (first >= last) return { lines, skipped: 0 };
  const open = (lines[first] as string).replace(/\r$/, '');
  const close = (lines[last] as string).replace(/\r$/, '').trim();
  const fence = FENCE.exec(open);
  if (fence) {
    const mark = fence[1] as string;
    if (!close.startsWith(mark) || close.replace(/[`~]/g, '') !== '') {
      throw new PatchParseError(
        `the patch opens a code fence (${open.trim()}) that is not closed at its end. Send the whole patch inside the fence, or no fence`,
        first + 1,
      );
    }
    return { lines: lines.slice(first + 1, last), skipped: first + 1 };
  }
  const heredoc = HEREDOC.exec(open);
  if (heredoc && close === heredoc[2]) return { lines: lines.slice(first + 1, last), skipped: first + 1 };
  return { lines, skipped: 0 };
}

/**
 * Splits `patch` into lines, unwrapped and with the patch's own CRLF line
 * breaks removed.
 *
 * @example
 * ```ts
 * patchText('```diff\r\n@@ @@\r\n-a\r\n+b\r\n```\r\n').lines; // ['@@ @@', '-a', '+b']
 * patchText('@@ @@\n-a\r\n+a\n').lines;                          // ['@@ @@', '-a\r', '+a']
 * ```
 */
export function patchText(patch: string): PatchText {
  const raw = patch.split('\n');
  if (raw[raw.length - 1] === '') raw.pop();
  const { lines, skipped } = unwrap(raw);
  // The patch's own line breaks are CRLF when every structural line ends in \r.
  const structural = lines.filter((l) => STRUCTURE.test(l));
  const crlf = structural.length > 0 ? structural.every((l) => l.endsWith('\r')) : lines.length > 0 && lines.every((l) => l === '' || l.endsWith('\r'));
  return { lines: crlf ? lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)) : lines, skipped };
}
