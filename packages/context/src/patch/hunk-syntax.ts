/**
 * The parts of a patch both accepted formats share: the `@@` hunk header in
 * every form models write it, and the hunk body (` `, `-`, `+` lines, blank
 * context lines whose space an editor stripped, `\ No newline` markers).
 *
 * @module
 */

/** One line of a hunk body. */
export interface PatchLine {
  /** `' '` context, `'-'` removed, `'+'` added. */
  readonly op: ' ' | '-' | '+';
  /** The line without its prefix and without a trailing `\r`. */
  readonly text: string;
  /**
   * The line ended in `\r` in the patch (beyond a CRLF patch's own line
   * breaks): the patch states this line's CRLF ending. Absent otherwise.
   */
  readonly cr?: true;
}

/** One hunk of a file patch. */
export interface Hunk {
  /** 1-based position of the hunk among its file's hunks (for messages). */
  readonly index: number;
  /** The `@@` line as written (several joined by a space when an envelope hunk has nested anchors). */
  readonly header: string;
  /** 1-based old start line from the header, when it had numbers. */
  readonly oldStart: number | undefined;
  readonly newStart: number | undefined;
  /**
   * Text the hunk lies under, outermost first: the function name git writes
   * after `@@ … @@`, text written in place of the numbers (`@@ def parse(`),
   * or an envelope's `@@ class A` lines. Used only to choose among several
   * places where the hunk's text matches.
   */
  readonly anchors: readonly string[];
  /** The hunk ends at the end of the file (`*** End of File`). */
  readonly atEnd: boolean;
  readonly lines: readonly PatchLine[];
  /** The old side's last line had no final newline (`\ No newline at end of file`). */
  readonly oldNoNewline: boolean;
  /** The new side's last line has no final newline. */
  readonly newNoNewline: boolean;
  /**
   * The text of a line a `\ No newline at end of file` marker follows while
   * more lines of the side it marks come after it in the hunk: git apply
   * joins the next of them onto that line, which no diff means.
   */
  readonly markedInside?: string;
}

/** A patch that could not be parsed; `line` is 1-based in the patch as given. */
export class PatchParseError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(`line ${line} of the patch: ${message}`);
    this.name = 'PatchParseError';
    this.line = line;
  }
}

/** What a hunk header says. */
export interface HunkHeader {
  readonly oldStart: number | undefined;
  readonly newStart: number | undefined;
  readonly anchors: readonly string[];
}

// `-N[,M] [+N[,M]]` or `+N[,M]`; a count may be missing or empty (`-12, +12,`).
const NUMBERS = /^(?:-(\d+)(?:,(\d*))?(?:\s*\+(\d+)(?:,(\d*))?)?|\+(\d+)(?:,(\d*))?)$/;

/**
 * Reads a line starting with `@@`. Accepted: `@@ -1,3 +1,4 @@ fn`, counts
 * missing (`@@ -1 +1 @@`), the old side alone (`@@ -1,3 @@`), no numbers
 * (`@@ @@`, `@@ ... @@`, a lone `@@`), and text instead of numbers
 * (`@@ def parse(`, `@@ function f() @@`), which becomes an anchor. Numbers
 * that do not parse (`@@ -1,2 +x @@`) are an error, never a skipped hunk.
 *
 * @example
 * ```ts
 * parseHunkHeader('@@ -10,2 @@ class A', 3); // { oldStart: 10, newStart: undefined, anchors: ['class A'] }
 * ```
 */
export function parseHunkHeader(line: string, lineNo: number): HunkHeader {
  const rest = line.replace(/^@@+/, '');
  const close = /^(.*?)@@+(.*)$/.exec(rest);
  const middle = (close ? (close[1] as string) : rest).trim();
  const tail = close ? (close[2] as string).trim() : '';
  const anchors: string[] = [];
  let oldStart: number | undefined;
  let newStart: number | undefined;
  if (/^[-+]/.test(middle)) {
    const m = NUMBERS.exec(middle.replace(/\s+/g, ' '));
    if (m === null) {
      throw new PatchParseError(
        `${JSON.stringify(line)} is not a hunk header: its line numbers do not read as "-start,count +start,count". Write "@@ -12,5 +12,6 @@", or "@@ @@" to let the hunk be found by its content`,
        lineNo,
      );
    }
    oldStart = m[1] === undefined ? undefined : Number(m[1]);
    newStart = m[3] !== undefined ? Number(m[3]) : m[5] !== undefined ? Number(m[5]) : undefined;
  } else if (middle !== '' && middle !== '...' && middle !== '…') anchors.push(middle);
  if (tail !== '') anchors.push(tail);
  return { oldStart, newStart, anchors };
}

/** A hunk body and where reading stopped. */
export interface HunkBody {
  readonly lines: PatchLine[];
  readonly oldNoNewline: boolean;
  readonly newNoNewline: boolean;
  /** See {@link Hunk.markedInside}. */
  readonly markedInside?: string;
  /** Index of the first line after the body. */
  readonly next: number;
}

function isHunkLine(l: string | undefined): boolean {
  return l !== undefined && (l[0] === ' ' || l[0] === '-' || l[0] === '+');
}

/**
 * Reads hunk lines from `lines[start]` until `isBoundary` says a header
 * begins or a line is not part of a hunk. Blank lines are context (editors
 * strip the space), except at the end, where they separate. An unprefixed
 * line followed by more hunk lines is an error: silently ending the hunk
 * there would drop the rest of it.
 */
export function readHunkBody(lines: readonly string[], start: number, isBoundary: (i: number) => boolean, lineNo: (i: number) => number): HunkBody {
  const body: PatchLine[] = [];
  const unprefixed: boolean[] = [];
  let oldNoNewline = false;
  let newNoNewline = false;
  // Where each marker stood (the body's length then) and the sides it marks.
  const markers: Array<{ at: number; old: boolean; new: boolean }> = [];
  let i = start;
  for (; i < lines.length && !isBoundary(i); i++) {
    const l = lines[i] as string;
    const c = l[0];
    if (c === ' ' || c === '-' || c === '+') {
      body.push(l.endsWith('\r') ? { op: c, text: l.slice(1, -1), cr: true } : { op: c, text: l.slice(1) });
      unprefixed.push(false);
    } else if (c === '\\') {
      const prev = body[body.length - 1];
      if (prev?.op === '-') oldNoNewline = true;
      else if (prev?.op === '+') newNoNewline = true;
      else if (prev) {
        oldNoNewline = true;
        newNoNewline = true;
      }
      if (prev) markers.push({ at: body.length, old: prev.op !== '+', new: prev.op !== '-' });
    } else if (l === '' || l === '\r') {
      body.push(l === '' ? { op: ' ', text: '' } : { op: ' ', text: '', cr: true });
      unprefixed.push(true);
    } else {
      if (isHunkLine(lines[i + 1]) && !isBoundary(i + 1)) {
        throw new PatchParseError(
          `${JSON.stringify(l)} is inside a hunk but does not start with " " (unchanged), "-" (removed) or "+" (added). Prefix it with the right one`,
          lineNo(i),
        );
      }
      break;
    }
  }
  // Blank lines closing a hunk are usually separators, not context.
  while (unprefixed[unprefixed.length - 1] === true) {
    unprefixed.pop();
    body.pop();
  }
  const inside = markers.find((m) => body.slice(m.at).some((l) => (l.op !== '+' && m.old) || (l.op !== '-' && m.new)));
  const markedInside = inside === undefined ? undefined : (body[inside.at - 1] as PatchLine).text;
  return { lines: body, oldNoNewline, newNoNewline, ...(markedInside === undefined ? {} : { markedInside }), next: i };
}
