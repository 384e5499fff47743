/**
 * Patch parsing that forgives what models get wrong, for the two formats
 * they are trained to write: the unified diff (`---`/`+++`, `@@` hunks) and
 * the `*** Begin Patch` envelope (see `envelope.ts`). Forgiven: missing or
 * wrong line counts, every number-less `@@` header form, missing
 * `---`/`+++` headers, CRLF patches, blank context lines whose leading space
 * an editor stripped, a code fence around the whole patch. Hunk extents come
 * from the lines themselves, never from the header counts. What cannot be
 * read is an error naming the line, never a silently skipped hunk.
 *
 * @module
 */

import { parseEnvelope } from './envelope.ts';
import { gitHeaderPaths, gitName, unquoteAt } from './git-path.ts';
import { type Hunk, parseHunkHeader, readHunkBody } from './hunk-syntax.ts';
import { patchText } from './patch-text.ts';

export { type Hunk, type HunkHeader, type PatchLine, PatchParseError } from './hunk-syntax.ts';

/** All hunks for one file. */
export interface FilePatch {
  /** Path on the old side (`a/` prefix removed); undefined for a new file or a headerless patch. */
  readonly oldPath: string | undefined;
  /** Path on the new side (`b/` prefix removed); undefined for a deletion or a headerless patch. */
  readonly newPath: string | undefined;
  readonly isNew: boolean;
  readonly isDelete: boolean;
  /**
   * A git `copy from`/`copy to` section: `newPath` is made from `oldPath`'s
   * content with the hunks applied, and `oldPath` stays (git apply keeps it).
   */
  readonly isCopy?: boolean;
  /**
   * Without a `diff --git` header, differing `---`/`+++` names are not a
   * rename (`diff -u f.orig f`, meant for `patch -p0`): the file is
   * `newPath` when it exists, else this name, the way `patch` picks.
   */
  readonly orPath?: string;
  /** A git binary section (`Binary files … differ`, `GIT binary patch`): its content is not in the patch as text. */
  readonly binary?: boolean;
  /** A git `old mode`/`new mode` pair: a mode change, which ctxfs does not make (it keeps no modes of its own). */
  readonly mode?: { readonly from: string; readonly to: string };
  /**
   * `'envelope'` for `*** Begin Patch`: its hunks are in file order (the
   * format says so), which may choose among several places a hunk matches.
   */
  readonly format: 'unified' | 'envelope';
  readonly hunks: readonly Hunk[];
}

function cleanPath(raw: string): string | undefined {
  let p = raw.trim();
  const quoted = p.startsWith('"') ? unquoteAt(p) : undefined;
  if (quoted !== undefined) p = quoted.name;
  else {
    // `--- a/file\t2024-01-01 ...` carries a timestamp after a tab.
    const tab = p.indexOf('\t');
    if (tab >= 0) p = p.slice(0, tab);
  }
  if (p === '/dev/null') return undefined;
  if (p.startsWith('a/') || p.startsWith('b/')) p = p.slice(2);
  return p;
}

interface Builder {
  oldPath: string | undefined;
  newPath: string | undefined;
  isNew: boolean;
  isDelete: boolean;
  isCopy: boolean;
  /** A `diff --git` line opened the section: its names are git's, whose differing names mean a rename. */
  git: boolean;
  sawHeader: boolean;
  /** A `---`/`+++` pair was seen for this file. */
  sawDashes: boolean;
  hunks: Hunk[];
  orPath?: string;
  binary: boolean;
  oldMode?: string;
  newMode?: string;
}

/** A `---`/`+++` line dated the Unix epoch (in any time zone): the side `diff -N` shows as absent. */
function atEpoch(line: string): boolean {
  return /\t\s*(?:1970-01-01|1969-12-31)[ T]/.test(line);
}

/**
 * Reads a section without a git header as `patch` does: `old/src/a.txt` and
 * `new/src/a.txt` (from `diff -ruN old new`, meant for `patch -p1`) are
 * `src/a.txt`; names that still differ (`diff -u f.orig f`) name one file,
 * the new name, or the old one when only it exists (`orPath`).
 */
function plainNames(c: Builder): void {
  const { oldPath, newPath } = c;
  if (oldPath !== undefined && newPath !== undefined && oldPath !== newPath) {
    const rest = (p: string) => (p.includes('/') ? p.slice(p.indexOf('/') + 1) : undefined);
    const common = rest(oldPath);
    if (common !== undefined && common === rest(newPath)) c.oldPath = c.newPath = common;
    else if (c.isDelete) c.newPath = oldPath;
    else {
      if (!c.isNew) c.orPath = oldPath;
      c.oldPath = newPath;
    }
  }
  if (c.isNew) c.oldPath = undefined;
  if (c.isDelete) c.newPath = undefined;
}

function newBuilder(): Builder {
  return {
    oldPath: undefined,
    newPath: undefined,
    isNew: false,
    isDelete: false,
    isCopy: false,
    git: false,
    binary: false,
    sawHeader: false,
    sawDashes: false,
    hunks: [],
  };
}

// Unindented: a unified diff's lines about such text carry a prefix (` *** Begin Patch`).
const ENVELOPE = /^\*\*\* (?:Begin Patch|(?:Update|Add|Delete) File:)/;

/**
 * Parses patch text — a unified diff or a `*** Begin Patch` envelope — into
 * file patches.
 *
 * @throws {PatchParseError} for a line that cannot be read (a malformed `@@`
 *   header, an unprefixed line inside a hunk, a broken envelope).
 * @example
 * ```ts
 * const [file] = parsePatch('--- a/x.ts\n+++ b/x.ts\n@@ @@\n-old\n+new\n');
 * file.newPath;          // 'x.ts'
 * file.hunks[0].lines;   // [{ op: '-', text: 'old' }, { op: '+', text: 'new' }]
 * ```
 */
export function parsePatch(patch: string): FilePatch[] {
  const { lines, skipped } = patchText(patch);
  const lineNo = (i: number) => i + 1 + skipped;
  if (lines.some((l) => ENVELOPE.test(l))) return parseEnvelope(lines, lineNo);
  const files: FilePatch[] = [];
  let current: Builder | undefined;
  let i = 0;

  const flush = () => {
    const c = current;
    current = undefined;
    if (c === undefined) return;
    if (!c.git) plainNames(c);
    const renamed = c.oldPath !== undefined && c.newPath !== undefined && c.oldPath !== c.newPath;
    const mode = c.oldMode !== undefined && c.newMode !== undefined && c.oldMode !== c.newMode ? { from: c.oldMode, to: c.newMode } : undefined;
    if (c.hunks.length > 0 || c.binary || mode !== undefined || (c.sawHeader && (c.isNew || c.isDelete || renamed))) {
      files.push({
        oldPath: c.oldPath,
        newPath: c.newPath,
        isNew: c.isNew,
        isDelete: c.isDelete,
        ...(c.isCopy ? { isCopy: true } : {}),
        ...(c.orPath !== undefined ? { orPath: c.orPath } : {}),
        ...(c.binary ? { binary: true } : {}),
        ...(mode !== undefined ? { mode } : {}),
        format: 'unified',
        hunks: c.hunks,
      });
    }
  };
  const isDashes = (k: number) => (lines[k] ?? '').startsWith('--- ') && (lines[k + 1] ?? '').startsWith('+++ ');
  const isBoundary = (k: number) => {
    const l = lines[k] as string;
    return l.startsWith('@@') || l.startsWith('diff --git ') || isDashes(k);
  };

  while (i < lines.length) {
    const line = (lines[i] as string).replace(/\r$/, '');
    if (line.startsWith('diff --git ')) {
      flush();
      current = newBuilder();
      current.sawHeader = true;
      current.git = true;
      const names = gitHeaderPaths(line.slice('diff --git '.length));
      if (names) [current.oldPath, current.newPath] = names;
      i++;
      continue;
    }
    if (isDashes(i)) {
      if (current === undefined || current.hunks.length > 0 || current.sawDashes) {
        flush();
        current = newBuilder();
      }
      current.sawHeader = true;
      current.sawDashes = true;
      const oldPath = cleanPath(line.slice(4));
      const newPath = cleanPath((lines[i + 1] as string).slice(4));
      current.oldPath = oldPath;
      current.newPath = newPath;
      // `diff -N` writes an absent side as an empty file dated the epoch, not /dev/null.
      current.isNew = oldPath === undefined || (!current.git && atEpoch(line));
      current.isDelete = newPath === undefined || (!current.git && atEpoch(lines[i + 1] as string));
      i += 2;
      continue;
    }
    const binary = line === 'GIT binary patch' ? [] : /^Binary files (.+) and (.+) differ$/.exec(line)?.slice(1);
    if (binary !== undefined) {
      // Plain `diff -r` names a binary file in this line alone.
      if (current === undefined || current.hunks.length > 0) {
        flush();
        current = newBuilder();
        current.oldPath = cleanPath(binary[0] ?? '');
        current.newPath = cleanPath(binary[1] ?? '');
      }
      current.binary = true;
      i++;
      continue;
    }
    if (current !== undefined && current.hunks.length === 0) {
      const meta = /^(new file mode|deleted file mode|rename from|rename to|copy from|copy to|old mode|new mode) (.+)$/.exec(line);
      if (meta?.[1] === 'old mode' || meta?.[1] === 'new mode') {
        if (meta[1] === 'old mode') current.oldMode = meta[2];
        else current.newMode = meta[2];
        i++;
        continue;
      }
      if (meta) {
        if (meta[1] === 'new file mode') current.isNew = true;
        else if (meta[1] === 'deleted file mode') current.isDelete = true;
        else if (meta[1] === 'rename from' || meta[1] === 'copy from') current.oldPath = gitName(meta[2] as string);
        else current.newPath = gitName(meta[2] as string);
        if (meta[1]?.startsWith('copy')) current.isCopy = true;
        i++;
        continue;
      }
    }
    if (line.startsWith('@@')) {
      const header = parseHunkHeader(line, lineNo(i));
      current ??= newBuilder();
      const body = readHunkBody(lines, i + 1, isBoundary, lineNo);
      if (body.lines.length > 0) {
        current.hunks.push({
          index: current.hunks.length + 1,
          header: line,
          oldStart: header.oldStart,
          newStart: header.newStart,
          anchors: header.anchors,
          atEnd: false,
          lines: body.lines,
          oldNoNewline: body.oldNoNewline,
          newNoNewline: body.newNoNewline,
          ...(body.markedInside === undefined ? {} : { markedInside: body.markedInside }),
        });
      }
      i = body.next;
      continue;
    }
    i++;
  }
  flush();
  return files;
}

/**
 * `fp` for a file stored with a BOM, whose text is read with the BOM taken
 * off: `git diff` writes the BOM as part of line 1, so a hunk at line 1 (or
 * without numbers) has it taken off its first line of each side too, or it
 * would not match, and written it would be a second BOM.
 *
 * @example
 * ```ts
 * const [fp] = parsePatch('@@ -1 +1 @@\n-\uFEFFa\n+\uFEFFA\n');
 * withoutBom(fp).hunks[0].lines; // [{ op: '-', text: 'a' }, { op: '+', text: 'A' }]
 * ```
 */
export function withoutBom(fp: FilePatch): FilePatch {
  const hunks = fp.hunks.map((h) => {
    if (h.oldStart !== undefined && h.oldStart > 1) return h;
    const oldFirst = h.lines.findIndex((l) => l.op !== '+');
    const newFirst = h.lines.findIndex((l) => l.op !== '-');
    if (![oldFirst, newFirst].some((i) => h.lines[i]?.text.startsWith('\uFEFF'))) return h;
    const lines = h.lines.map((l, i) => ((i === oldFirst || i === newFirst) && l.text.startsWith('\uFEFF') ? { ...l, text: l.text.slice(1) } : l));
    return { ...h, lines };
  });
  return { ...fp, hunks };
}
