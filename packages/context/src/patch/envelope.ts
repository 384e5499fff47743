/**
 * The `*** Begin Patch` envelope: the patch format OpenAI's models are
 * trained to write for their `apply_patch` tool.
 *
 * ```
 * *** Begin Patch
 * *** Update File: src/app.py
 * *** Move to: src/main.py        (optional: rename)
 * @@ class App                     (optional anchors, outermost first)
 * @@     def run(self):
 *          x = 1
 * -        y = 2
 * +        y = 3
 * *** End of File                 (optional: the hunk ends at the end of the file)
 * *** Add File: NOTES.md
 * +first line
 * *** Delete File: old.txt
 * *** End Patch
 * ```
 *
 * It becomes the same {@link FilePatch} values as a unified diff, so it is
 * applied by the same engine, all or nothing, with the same refusals. Hunks
 * carry no line numbers; they are located by content, their anchors and
 * their order. A `@@ -1,2 +1,2 @@` line inside an envelope is read as a
 * unified header (numbers and all): models mix the two.
 *
 * @module
 */

import { type Hunk, type PatchLine, PatchParseError, parseHunkHeader, readHunkBody } from './hunk-syntax.ts';
import type { FilePatch } from './parse-patch.ts';

const FILE_OP = /^\*\*\* (Update|Add|Delete) File:\s*(.*)$/;
const MOVE = /^\*\*\* Move to:\s*(.*)$/;
const EXPECTED = 'expected "*** Update File: <path>", "*** Add File: <path>", "*** Delete File: <path>" or "*** End Patch"';

/**
 * Parses envelope lines (already unwrapped, CRLF line breaks removed).
 * `lineNo` turns an index into a line number of the patch as given.
 *
 * @throws {PatchParseError} naming the line that breaks the format.
 * @example
 * ```ts
 * const [f] = parseEnvelope(['*** Begin Patch', '*** Delete File: a.txt', '*** End Patch'], (i) => i + 1);
 * f.isDelete; // true
 * ```
 */
export function parseEnvelope(lines: readonly string[], lineNo: (i: number) => number): FilePatch[] {
  const text = (i: number) => (lines[i] ?? '').replace(/\r$/, '').trim();
  let begin = 0;
  while (begin < lines.length && text(begin) === '') begin++;
  let end = lines.length - 1;
  while (end > begin && text(end) === '') end--;
  if (text(begin) !== '*** Begin Patch')
    throw new PatchParseError(`${JSON.stringify(text(begin))}: an envelope patch starts with "*** Begin Patch"`, lineNo(begin));
  if (end === begin || text(end) !== '*** End Patch') {
    throw new PatchParseError(`the patch does not end with "*** End Patch" (was it cut off?). Send the whole patch`, lineNo(end));
  }
  const files: FilePatch[] = [];
  const isBoundary = (k: number) => k >= end || (lines[k] as string).startsWith('@@') || (lines[k] as string).startsWith('*** ');
  let i = begin + 1;
  while (i < end) {
    const line = text(i);
    if (line === '') {
      i++;
      continue;
    }
    const op = FILE_OP.exec(line);
    const path = op?.[2]?.trim();
    if (op === null || path === undefined || path === '') {
      throw new PatchParseError(`${JSON.stringify(line)} is not part of the envelope: ${op ? 'the path is missing' : EXPECTED}`, lineNo(i));
    }
    i++;
    if (op[1] === 'Delete') {
      files.push({ oldPath: path, newPath: undefined, isNew: false, isDelete: true, format: 'envelope', hunks: [] });
      continue;
    }
    if (op[1] === 'Add') {
      const added = readAddedLines(lines, i, isBoundary, lineNo);
      i = added.next;
      const hunks: Hunk[] =
        added.lines.length === 0
          ? []
          : [
              {
                index: 1,
                header: '',
                oldStart: undefined,
                newStart: undefined,
                anchors: [],
                atEnd: false,
                lines: added.lines,
                oldNoNewline: false,
                newNoNewline: added.newNoNewline,
              },
            ];
      files.push({ oldPath: undefined, newPath: path, isNew: true, isDelete: false, format: 'envelope', hunks });
      continue;
    }
    let newPath = path;
    const move = MOVE.exec(text(i));
    if (move) {
      newPath = (move[1] as string).trim();
      if (newPath === '') throw new PatchParseError('"*** Move to:" names no path', lineNo(i));
      i++;
    }
    const hunks: Hunk[] = [];
    while (i < end) {
      if (text(i) === '') {
        i++;
        continue;
      }
      if (FILE_OP.test(text(i))) break;
      const headers: string[] = [];
      const anchors: string[] = [];
      let oldStart: number | undefined;
      let newStart: number | undefined;
      const headerAt = i;
      while (i < end && (lines[i] as string).startsWith('@@')) {
        const h = parseHunkHeader(text(i), lineNo(i));
        headers.push(text(i));
        anchors.push(...h.anchors);
        oldStart ??= h.oldStart;
        newStart ??= h.newStart;
        i++;
      }
      if (headers.length === 0 && hunks.length > 0) throw new PatchParseError(`${JSON.stringify(text(i))}: ${EXPECTED}, or a "@@" hunk`, lineNo(i));
      const body = readHunkBody(lines, i, isBoundary, lineNo);
      if (body.lines.length === 0) {
        throw new PatchParseError(`the hunk of ${path} starting here has no lines. Give it " ", "-" and "+" lines, or remove it`, lineNo(headerAt));
      }
      i = body.next;
      let atEnd = false;
      if (text(i) === '*** End of File') {
        atEnd = true;
        i++;
      }
      hunks.push({
        index: hunks.length + 1,
        header: headers.join(' '),
        oldStart,
        newStart,
        anchors,
        atEnd,
        lines: body.lines,
        oldNoNewline: body.oldNoNewline,
        newNoNewline: body.newNoNewline,
        ...(body.markedInside === undefined ? {} : { markedInside: body.markedInside }),
      });
      if (i < end && !isBoundary(i) && text(i) !== '') throw new PatchParseError(`${JSON.stringify(text(i))}: ${EXPECTED}, or a "@@" hunk`, lineNo(i));
    }
    if (hunks.length === 0 && newPath === path) {
      throw new PatchParseError(`"*** Update File: ${path}" has no hunks. Add the lines to change, or remove the section`, lineNo(headerLine(lines, i, path)));
    }
    files.push({ oldPath: path, newPath, isNew: false, isDelete: false, format: 'envelope', hunks });
  }
  return files;
}

/** The `+` lines of an `*** Add File:` section; blank lines between them are empty lines of the file. */
function readAddedLines(
  lines: readonly string[],
  start: number,
  isBoundary: (i: number) => boolean,
  lineNo: (i: number) => number,
): { lines: PatchLine[]; newNoNewline: boolean; next: number } {
  const body = readHunkBody(lines, start, isBoundary, lineNo);
  const stray = body.lines.findIndex((l) => l.op !== '+' && l.text !== '');
  if (stray >= 0) {
    throw new PatchParseError(
      `a line of an "*** Add File:" section does not start with "+"; every line of a new file does`,
      lineNo(lineIndexOf(lines, start, stray)),
    );
  }
  if (body.next < lines.length && !isBoundary(body.next) && (lines[body.next] as string).trim() !== '') {
    throw new PatchParseError(`${JSON.stringify(lines[body.next])} is not part of the envelope: every line of a new file starts with "+"`, lineNo(body.next));
  }
  return { lines: body.lines.map((l) => (l.op === '+' ? l : { ...l, op: '+' })), newNoNewline: body.newNoNewline, next: body.next };
}

/** Index in `lines` of the `n`-th body line read from `start` (bodies skip only `\` markers). */
function lineIndexOf(lines: readonly string[], start: number, n: number): number {
  let seen = -1;
  for (let k = start; k < lines.length; k++) {
    if ((lines[k] as string).startsWith('\\')) continue;
    if (++seen === n) return k;
  }
  return start;
}

function headerLine(lines: readonly string[], before: number, path: string): number {
  for (let k = Math.min(before, lines.length - 1); k >= 0; k--) if ((lines[k] as string).includes(`File: ${path}`)) return k;
  return before;
}
