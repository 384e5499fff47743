/**
 * Lines of a file too large to load whole, read by streaming: the lines of
 * one window (or the last lines of the file), the line count and the
 * version, with memory bounded by the window whatever the file's size or
 * the length of its lines.
 *
 * The text comes from the backend's own `openText`, so a window decodes as
 * `fs.read` does. The version is the SHA-256 of the bytes, taken by the
 * backend's `digest` before and after the pass: when the two differ the
 * file changed under the read, and the pass is made again — a model is
 * never handed lines of one version under the hash of another.
 *
 * @module
 */

import { type Filesystem, fsError } from '@ctxfs/core';

/** Which lines to keep. */
export type WindowRequest =
  /** Lines `from`..`to` (1-based, inclusive), plus `before` lines above them kept for context (redaction). */
  | { readonly from: number; readonly to: number; readonly before?: number }
  /** The last lines of the file whose characters add up to at most `chars`. */
  | { readonly tailChars: number };

/** A window of a large file's lines at one version. */
export interface LineWindow {
  readonly path: string;
  /** Hex SHA-256 of the whole file: the version the lines belong to. */
  readonly sha256: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly encoding: string;
  /** Lines in the file. */
  readonly totalLines: number;
  /** Characters in the file (terminators excluded), for estimates of what was not kept. */
  readonly totalChars: number;
  /** Line number of `lines[0]` (1-based). */
  readonly firstLine: number;
  /** The kept lines; a line longer than the cap is cut (see `cut`). */
  readonly lines: readonly string[];
  /** Characters cut from the end of a kept line, by line number. */
  readonly cut: ReadonlyMap<number, number>;
  /** The file's first characters, for the registry's classification. */
  readonly head: string;
}

/** Passes made before giving up on a file that keeps changing. */
const MAX_PASSES = 3;

async function versionOf(fs: Filesystem, path: string): Promise<{ sha256: string; size: number }> {
  for await (const batch of fs.digest([path])) {
    const d = batch[0];
    if (d === undefined) break;
    if (d.error) throw d.error;
    return { sha256: d.sha256, size: d.size };
  }
  throw fsError('EIO', 'digest', path, { reason: 'the backend returned no digest' });
}

/**
 * Reads a window of `path` by streaming.
 *
 * @example
 * ```ts
 * const w = await readLineWindow(fs, 'logs/huge.log', { from: 1_000_000, to: 1_000_040 }, 20_000);
 * w.totalLines; // 4_200_000
 * w.lines[0];   // line 1,000,000
 * ```
 */
export async function readLineWindow(fs: Filesystem, path: string, request: WindowRequest, maxLineChars: number, op = 'readLines'): Promise<LineWindow> {
  for (let pass = 1; ; pass++) {
    const before = await versionOf(fs, path);
    const window = await scan(fs, path, request, maxLineChars);
    const after = await versionOf(fs, path);
    if (before.sha256 === after.sha256) {
      const stat = await fs.stat(path);
      return { path, sha256: after.sha256, size: after.size, mtimeMs: stat.mtime.getTime(), ...window };
    }
    if (pass >= MAX_PASSES) {
      throw fsError('EBUSY', op, path, {
        reason: `the file changed during each of ${MAX_PASSES} reads`,
        hint: 'it is being written; read it again when the writer is done',
      });
    }
  }
}

type Scanned = Omit<LineWindow, 'path' | 'sha256' | 'size' | 'mtimeMs'>;

async function scan(fs: Filesystem, path: string, request: WindowRequest, maxLineChars: number): Promise<Scanned> {
  const keepFrom = 'from' in request ? Math.max(1, request.from - (request.before ?? 0)) : 1;
  const keepTo = 'from' in request ? request.to : Number.POSITIVE_INFINITY;
  const tailChars = 'tailChars' in request ? request.tailChars : 0;
  const kept: string[] = [];
  const cut = new Map<number, number>();
  let tailStart = 1;
  let tailSize = 0;
  let head = '';
  let totalChars = 0;
  let lineNo = 1;
  // The current line: its first `maxLineChars` characters and how many more.
  let line = '';
  let over = 0;
  let endedWithNewline = false;

  const keep = (n: number): boolean => ('from' in request ? n >= keepFrom && n <= keepTo : true);
  const finish = (): void => {
    // A CR ending a line is its terminator's, the last line's too (a file ending in a lone \r): core's line
    // splitting takes it so, and a file loaded whole is read the same way.
    const text = over === 0 && line.endsWith('\r') ? line.slice(0, -1) : line;
    totalChars += text.length + over;
    if (keep(lineNo)) {
      kept.push(text);
      if (over > 0) cut.set(lineNo, over);
      if (tailChars > 0) {
        tailSize += text.length;
        // Drop the oldest lines while over the tail's size, but keep the last one.
        while (tailSize > tailChars && kept.length > 1) {
          tailSize -= (kept.shift() as string).length;
          cut.delete(tailStart);
          tailStart++;
        }
      }
    }
    line = '';
    over = 0;
    lineNo++;
  };

  await using reader = await fs.openText(path);
  const encoding = (): string => reader.encoding;
  for await (const chunk of reader) {
    if (head.length < 1024) head += chunk.slice(0, 1024 - head.length);
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf('\n', at);
      const end = nl < 0 ? chunk.length : nl;
      const room = maxLineChars - line.length;
      const piece = end - at;
      if (room > 0) line += chunk.slice(at, at + Math.min(room, piece));
      if (piece > room) over += piece - Math.max(0, room);
      if (nl < 0) {
        endedWithNewline = false;
        break;
      }
      endedWithNewline = true;
      finish();
      at = nl + 1;
    }
  }
  // A last line without a terminator is a line; a file ending in one has no empty line after it.
  if (!endedWithNewline && (line.length > 0 || over > 0)) finish();
  const totalLines = lineNo - 1;
  return {
    encoding: encoding(),
    totalLines,
    totalChars,
    firstLine: tailChars > 0 ? tailStart : keepFrom,
    lines: kept,
    cut,
    head,
  };
}
