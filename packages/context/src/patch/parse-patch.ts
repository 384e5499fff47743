/**
 * Unified-diff parsing that forgives what models get wrong: missing or wrong
 * line counts, `@@ @@` headers without numbers, missing `---`/`+++` headers,
 * CRLF patches, blank context lines whose leading space an editor stripped.
 * Hunk extents come from the lines themselves, never from the header counts.
 *
 * @module
 */

/** One line of a hunk body. */
export interface PatchLine {
  /** `' '` context, `'-'` removed, `'+'` added. */
  readonly op: ' ' | '-' | '+';
  readonly text: string;
}

/** One hunk of a file patch. */
export interface Hunk {
  /** 1-based position of the hunk in the patch (for messages). */
  readonly index: number;
  /** The `@@` line as written. */
  readonly header: string;
  /** 1-based old start line from the header, when it had numbers. */
  readonly oldStart: number | undefined;
  readonly newStart: number | undefined;
  readonly lines: readonly PatchLine[];
  /** The old side's last line had no final newline (`\ No newline at end of file`). */
  readonly oldNoNewline: boolean;
  /** The new side's last line has no final newline. */
  readonly newNoNewline: boolean;
}

/** All hunks for one file. */
export interface FilePatch {
  /** Path on the old side (`a/` prefix removed); undefined for a new file or a headerless patch. */
  readonly oldPath: string | undefined;
  /** Path on the new side (`b/` prefix removed); undefined for a deletion or a headerless patch. */
  readonly newPath: string | undefined;
  readonly isNew: boolean;
  readonly isDelete: boolean;
  readonly hunks: readonly Hunk[];
}

/** A patch that could not be parsed at all. */
export class PatchParseError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(`${message} (patch line ${line})`);
    this.name = 'PatchParseError';
    this.line = line;
  }
}

const HUNK_HEADER = /^@@+\s*(?:-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?)?\s*@@+(.*)$/;

function cleanPath(raw: string): string | undefined {
  let p = raw.trim();
  // `--- a/file\t2024-01-01 ...` carries a timestamp after a tab.
  const tab = p.indexOf('\t');
  if (tab >= 0) p = p.slice(0, tab);
  if (p.startsWith('"') && p.endsWith('"')) p = p.slice(1, -1);
  if (p === '/dev/null') return undefined;
  if (p.startsWith('a/') || p.startsWith('b/')) p = p.slice(2);
  return p;
}

interface Builder {
  oldPath: string | undefined;
  newPath: string | undefined;
  isNew: boolean;
  isDelete: boolean;
  sawHeader: boolean;
  /** A `---`/`+++` pair was seen for this file. */
  sawDashes: boolean;
  hunks: Hunk[];
}

function newBuilder(): Builder {
  return { oldPath: undefined, newPath: undefined, isNew: false, isDelete: false, sawHeader: false, sawDashes: false, hunks: [] };
}

/**
 * Parses unified diff text into file patches.
 *
 * @example
 * ```ts
 * const [file] = parsePatch('--- a/x.ts\n+++ b/x.ts\n@@ @@\n-old\n+new\n');
 * file.newPath;          // 'x.ts'
 * file.hunks[0].lines;   // [{ op: '-', text: 'old' }, { op: '+', text: 'new' }]
 * ```
 */
export function parsePatch(patch: string): FilePatch[] {
  const lines = patch.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const files: FilePatch[] = [];
  let current: Builder | undefined;
  let hunkCount = 0;
  let i = 0;

  const flush = () => {
    if (current && current.hunks.length > 0) {
      files.push({
        oldPath: current.oldPath,
        newPath: current.newPath,
        isNew: current.isNew,
        isDelete: current.isDelete,
        hunks: current.hunks,
      });
    } else if (current?.sawHeader && (current.isNew || current.isDelete)) {
      files.push({ oldPath: current.oldPath, newPath: current.newPath, isNew: current.isNew, isDelete: current.isDelete, hunks: [] });
    }
    current = undefined;
  };

  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.startsWith('diff --git ')) {
      flush();
      current = newBuilder();
      current.sawHeader = true;
      const m = /^diff --git (?:"?a\/(.+?)"?) (?:"?b\/(.+?)"?)$/.exec(line);
      if (m) {
        current.oldPath = m[1];
        current.newPath = m[2];
      }
      i++;
      continue;
    }
    if (line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ')) {
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
      current.isNew = oldPath === undefined;
      current.isDelete = newPath === undefined;
      i += 2;
      continue;
    }
    if (current !== undefined && /^(new file mode|deleted file mode) /.test(line)) {
      if (line.startsWith('new')) current.isNew = true;
      else current.isDelete = true;
      i++;
      continue;
    }
    const header = HUNK_HEADER.exec(line);
    if (header) {
      current ??= newBuilder();
      const body: PatchLine[] = [];
      const unprefixed: boolean[] = [];
      let oldNoNewline = false;
      let newNoNewline = false;
      i++;
      while (i < lines.length) {
        const l = lines[i] as string;
        if (l.startsWith('@@') || l.startsWith('diff --git ')) break;
        if (l.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ')) break;
        const c = l[0];
        if (c === ' ' || c === '-' || c === '+') {
          body.push({ op: c, text: l.slice(1) });
          unprefixed.push(false);
        } else if (c === '\\') {
          const prev = body[body.length - 1];
          if (prev?.op === '-') oldNoNewline = true;
          else if (prev?.op === '+') newNoNewline = true;
          else if (prev) {
            oldNoNewline = true;
            newNoNewline = true;
          }
        } else if (l === '') {
          body.push({ op: ' ', text: '' });
          unprefixed.push(true);
        } else break;
        i++;
      }
      // Blank lines closing a hunk are usually separators, not context.
      while (unprefixed[unprefixed.length - 1] === true) {
        unprefixed.pop();
        body.pop();
      }
      if (body.length === 0) continue;
      hunkCount++;
      current.hunks.push({
        index: hunkCount,
        header: line,
        oldStart: header[1] === undefined ? undefined : Number(header[1]),
        newStart: header[3] === undefined ? undefined : Number(header[3]),
        lines: body,
        oldNoNewline,
        newNoNewline,
      });
      continue;
    }
    i++;
  }
  flush();
  return files;
}
