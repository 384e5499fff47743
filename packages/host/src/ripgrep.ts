/**
 * Native grep through ripgrep, agreeing with the shared JS scanner match for
 * match:
 *
 * - rg's plain output is read (`--null --line-number`: path, NUL, number,
 *   `:`, the line), not `--json`: JSON made rg a third slower and its
 *   parsing cost more than rg's own search. Names holding a control
 *   character (a newline would split the output's lines) are excluded from
 *   rg's walk; no path can address them anyway.
 * - rg walks in the JS walk's order (`--sort path`: depth-first, siblings by
 *   name), does not follow symlinks, skips temp files and, unless `dot`,
 *   dotfiles; ignore files are not consulted (`--no-ignore`), as the scanner
 *   does not consult them.
 * - Both accept the same patterns: core's `compileGrep` decides (ripgrep's
 *   syntax, refusing backreferences and look-around) before either runs.
 * - rg only finds candidate lines: it is given core's Rust rendering of the
 *   pattern (`matcher.rustPattern`: the same lines or more, e.g. `\b` as
 *   `(?-u:\b)`, since core's is ASCII, and `$` as `\r?$`), and every line it
 *   reports is matched again by the JS matcher, which also computes the spans.
 * - rg runs without `--crlf`, which would take `\r` out of every class and
 *   refuse it in a pattern: a line whose CR is text (`a\rb`) would be lost to
 *   `a\sb`. rg sees a CRLF line with its CR; the rendering's `$` allows
 *   for it, and the CR ending a printed line is cut as the scanner cuts it. A pattern with
 *   no Rust rendering, or one this rg refuses, is searched by the JS scanner.
 * - A file in which rg saw a NUL byte (its "binary file matches" notice)
 *   is searched again by the JS scanner, so binary handling is the
 *   scanner's exactly. So is a file with a line rg printed that does not
 *   read as UTF-8: it may be legacy-encoded, and the scanner decodes it as
 *   a text read does. The pattern's Rust rendering widens what may match
 *   a character outside ASCII to the bytes of legacy encodings, and
 *   `matcher.rustLegacyPattern` is given beside it, so that such a file
 *   comes to the scanner wherever its decoded text may match. A line of output that is neither a match nor that
 *   notice is an `EIO`, never a guess.
 * - rg runs inside the verified directory (see spawn-in-directory.ts) and
 *   searches `.`, so a directory swapped for a symlink after the check
 *   cannot send it outside.
 *
 * @module
 */

import { FsError, type GrepMatch, type GrepMatcher, type GrepPlan, isAddressableName, lineMatch, readsAsUtf8 } from '@ctxfs/core';
import { TEMP_PREFIX } from './atomic-write.ts';
import type { RootGuard } from './root-guard.ts';
import { findExecutable, spawnInDirectory } from './spawn-in-directory.ts';

/** Absolute path of `rg` on PATH, or undefined. */
export function findRipgrep(): string | undefined {
  return findExecutable('rg');
}

/** Flags of the grep call that the matcher does not expose. */
export interface GrepFlags {
  ignoreCase: boolean;
  literal: boolean;
}

const NEWLINE = 0x0a;
const NUL = 0x00;
const COLON = 0x3a;
const CR = 0x0d;

/**
 * Lines of rg's output as bytes, without their `\n`. A line's beginnings
 * are kept apart and joined once its end arrives, so a match on a line of
 * megabytes (a minified file), arriving in 64 KiB chunks, costs one copy.
 */
async function* outputLines(output: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let head: Buffer[] = [];
  for await (const chunk of output) {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl);
      if (head.length === 0) yield piece;
      else {
        head.push(piece);
        yield Buffer.concat(head);
        head = [];
      }
      start = nl + 1;
    }
    if (start < chunk.length) head.push(chunk.subarray(start));
  }
  if (head.length > 0) yield Buffer.concat(head);
}

/**
 * rg's notice that a file holds a NUL byte (`--binary`): printed instead of
 * the file's remaining lines, after the path and `: ` (rg 13) or the path's
 * NUL (later versions may use it there too).
 */
const BINARY_NOTICE = /^:? ?binary file matches \(found "\\0" byte around offset \d+\)$/;

function unreadableOutput(scope: string, line: Buffer): FsError {
  const preview = line.toString('utf8', 0, 80);
  return new FsError({
    code: 'EIO',
    op: 'grep',
    path: scope,
    reason: `ripgrep printed a line ctxfs cannot read: ${JSON.stringify(preview)}`,
    hint: "open the filesystem with grep: 'js' to search without ripgrep, or use ripgrep 13 or later",
  });
}

/** One line of rg's output: a match of `path` (`utf8`: its bytes read as UTF-8), or its binary notice. */
type OutputLine = { path: Buffer; lineNumber: number; text: string; utf8: boolean } | { path: Buffer; binary: true };

/** Reads `path NUL number : text` (a match) or `path: binary file matches …`. */
function parseOutputLine(line: Buffer): OutputLine | undefined {
  const nul = line.indexOf(NUL);
  if (nul >= 0) {
    let i = nul + 1;
    let lineNumber = 0;
    for (let c = line[i]; c !== undefined && c >= 0x30 && c <= 0x39; c = line[++i]) lineNumber = lineNumber * 10 + (c - 0x30);
    // A CR ending the printed line belongs to its terminator, as in the scanner's lines: rg prints a line as the
    // file has it and ends a last line without one with `\n`, so `a\r\n` and a last `a\r` both read `a`.
    const end = line[line.length - 1] === CR ? line.length - 1 : line.length;
    if (i > nul + 1 && line[i] === COLON) {
      const bytes = line.subarray(i + 1, Math.max(i + 1, end));
      return { path: line.subarray(0, nul), lineNumber, text: bytes.toString('utf8'), utf8: readsAsUtf8(bytes) };
    }
    return BINARY_NOTICE.test(line.toString('latin1', nul + 1)) ? { path: line.subarray(0, nul), binary: true } : undefined;
  }
  // Paths holding a newline or a control character are never searched (see the exclude glob), so the notice is the line's end.
  const text = line.toString('latin1');
  const at = text.lastIndexOf(': binary file matches (');
  return at >= 0 && BINARY_NOTICE.test(text.slice(at)) ? { path: line.subarray(0, at), binary: true } : undefined;
}

/** Everything {@link ripgrepSearch} needs. */
export interface RipgrepSearch {
  rg: string;
  guard: RootGuard;
  matcher: GrepMatcher;
  plan: GrepPlan;
  flags: GrepFlags;
  /** The shared scanner over one file, for files rg saw as binary. */
  rescan: (path: string, limit: number) => AsyncIterable<GrepMatch>;
  /** The shared scanner over the whole plan, when rg cannot take the pattern. */
  fallback: () => AsyncIterable<GrepMatch>;
  /** Names never entered (the walk's excludes). */
  exclude?: readonly string[];
  /** Extra filter on workspace paths of matching files (e.g. `.gitignore` rules). */
  keep?: ((path: string) => boolean) | undefined;
}

/** Searches a directory scope with rg; see the module comment for the guarantees. */
export async function* ripgrepSearch(s: RipgrepSearch): AsyncGenerator<GrepMatch> {
  const { plan, matcher, flags } = s;
  const pattern = matcher.rustPattern;
  if (pattern === undefined) {
    yield* s.fallback();
    return;
  }
  const args = ['--null', '--line-number', '--with-filename', '--no-heading', '--color', 'never'];
  args.push('--no-config', '--no-ignore', '--hidden', '--binary', '--sort', 'path', '--no-messages', '-g', `!${TEMP_PREFIX}*`);
  // Names with a control character are never addressable, and one with a newline would split rg's lines.
  args.push('-g', '!*[\u0001-\u001f\u007f]*');
  if (!plan.dot) args.push('-g', '!.*');
  for (const name of s.exclude ?? []) args.push('-g', `!${name.replace(/[\\*?[\]{}!]/g, '\\$&')}`);
  // A literal pattern arrives escaped, so one regex serves both kinds.
  args.push(flags.ignoreCase ? '--ignore-case' : '--case-sensitive');
  args.push('--regexp', pattern);
  // rg reads bytes as UTF-8: the lines of legacy-encoded files the pattern could miss come along too.
  if (matcher.rustLegacyPattern !== undefined) args.push('--regexp', matcher.rustLegacyPattern);
  args.push('--', '.');
  const child = await spawnInDirectory(s.guard, plan.scope, s.rg, args);
  const scopePrefix = plan.scope === '' ? '' : `${plan.scope}/`;
  let remaining = plan.maxMatches;
  let produced = false;
  // rg prints a file's lines together (`--sort path` searches one file at a time); a file is done when another's path comes.
  // A file is searched again by the shared scanner when rg saw a NUL in it or printed a line of it that is not UTF-8.
  let current: { raw: Buffer; rel: string; ok: boolean; rescan: boolean; matches: GrepMatch[] } | undefined;
  const finish = async function* (file: NonNullable<typeof current>): AsyncGenerator<GrepMatch> {
    if (!file.ok) return;
    const source = file.rescan ? s.rescan(scopePrefix + file.rel, remaining) : file.matches;
    for await (const m of source) {
      produced = true;
      yield m;
      if (--remaining <= 0) return;
    }
  };
  try {
    for await (const line of outputLines(child.output)) {
      const out = parseOutputLine(line);
      if (out === undefined) throw unreadableOutput(plan.scope, line);
      if (current === undefined || !out.path.equals(current.raw)) {
        if (current !== undefined) {
          yield* finish(current);
          if (remaining <= 0) return;
        }
        const full = out.path.toString('utf8');
        const rel = full.startsWith('./') ? full.slice(2) : full;
        const ok =
          // A file below a name no path can address is skipped, as listings skip it (a name that is not
          // UTF-8 decodes with U+FFFD, which no addressable name holds).
          rel.split('/').every(isAddressableName) && (plan.filter === undefined || plan.filter(rel)) && (s.keep === undefined || s.keep(scopePrefix + rel));
        current = { raw: Buffer.from(out.path), rel, ok, rescan: false, matches: [] };
      }
      if ('binary' in out || !out.utf8) current.rescan = true;
      else if (current.ok && !current.rescan) {
        const match = lineMatch(matcher, scopePrefix + current.rel, out.lineNumber, out.text);
        if (match !== undefined) current.matches.push(match);
      }
    }
    if (current !== undefined) {
      yield* finish(current);
      if (remaining <= 0) return;
    }
    const code = await child.exited;
    if (code === 2 && !produced && /regex|parse|error/i.test(child.stderr())) {
      // rg refused the pattern: the scanner decides.
      yield* s.fallback();
    } else if (code === -1 && !produced) {
      yield* s.fallback();
    }
  } finally {
    child.stop();
  }
}
