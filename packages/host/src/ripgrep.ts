/**
 * Native grep through ripgrep (`rg --json`), agreeing with the shared JS
 * scanner match for match:
 *
 * - rg walks in the JS walk's order (`--sort path`: depth-first, siblings by
 *   name), does not follow symlinks, skips temp files and, unless `dot`,
 *   dotfiles; ignore files are not consulted (`--no-ignore`), as the scanner
 *   does not consult them.
 * - Both accept the same patterns: core's `compileGrep` decides (ripgrep's
 *   syntax, refusing backreferences and look-around) before either runs.
 * - rg only finds candidate lines: it is given core's Rust rendering of the
 *   pattern (`matcher.rustPattern`: the same lines or more, e.g. `\b` as
 *   `(?-u:\b)`, since core's is ASCII), and every line it reports is matched
 *   again by the JS matcher, which also computes the spans. A pattern with
 *   no Rust rendering, or one this rg refuses, is searched by the JS scanner.
 * - A file in which rg saw a NUL byte is searched again by the JS scanner,
 *   so binary handling is the scanner's exactly.
 * - rg runs inside the verified directory (see spawn-in-directory.ts) and
 *   searches `.`, so a directory swapped for a symlink after the check
 *   cannot send it outside.
 *
 * @module
 */

import type { Readable } from 'node:stream';
import { type GrepMatch, type GrepMatcher, type GrepPlan, isAddressableName, type MatchSpan } from '@ctxfs/core';
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

interface RgText {
  text?: string;
  bytes?: string;
}

function rgString(v: RgText | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v.text === 'string') return v.text;
  if (typeof v.bytes === 'string') return new TextDecoder().decode(Buffer.from(v.bytes, 'base64'));
  return undefined;
}

function rgPathIsText(v: RgText | undefined): boolean {
  return v !== undefined && typeof v.text === 'string';
}

function stripTerminator(line: string): string {
  let s = line;
  if (s.endsWith('\n')) s = s.slice(0, -1);
  if (s.endsWith('\r')) s = s.slice(0, -1);
  return s;
}

/** Lines of a stream; much faster than readline's async iterator for many short lines. */
async function* jsonLines(stream: Readable): AsyncGenerator<string> {
  // A line's beginnings are kept apart and joined once its end arrives, and
  // each chunk is searched once: a match in a minified file is one JSON line
  // of megabytes, arriving in 64 KiB chunks, and joining then searching the
  // whole of it again at every chunk was quadratic (seconds for one line).
  let head: string[] = [];
  stream.setEncoding('utf8');
  for await (const chunk of stream as AsyncIterable<string>) {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, nl);
      if (head.length === 0) yield piece;
      else {
        head.push(piece);
        yield head.join('');
        head = [];
      }
      start = nl + 1;
    }
    if (start < chunk.length) head.push(chunk.slice(start));
  }
  if (head.length > 0) yield head.join('');
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
  const args = ['--json', '--no-config', '--no-ignore', '--hidden', '--binary', '--sort', 'path', '--crlf', '--no-messages', '-g', `!${TEMP_PREFIX}*`];
  if (!plan.dot) args.push('-g', '!.*');
  for (const name of s.exclude ?? []) args.push('-g', `!${name.replace(/[\\*?[\]{}!]/g, '\\$&')}`);
  // A literal pattern arrives escaped, so one regex serves both kinds.
  args.push(flags.ignoreCase ? '--ignore-case' : '--case-sensitive');
  args.push('--regexp', pattern, '--', '.');
  const child = await spawnInDirectory(s.guard, plan.scope, s.rg, args);
  const prefix = './';
  const scopePrefix = plan.scope === '' ? '' : `${plan.scope}/`;
  let remaining = plan.maxMatches;
  let produced = false;
  let current: { rel: string; ok: boolean; matches: GrepMatch[] } | undefined;
  try {
    for await (const line of jsonLines(child.stdout)) {
      let msg: { type: string; data: { path?: RgText; lines?: RgText; line_number?: number; binary_offset?: number | null } };
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      const d = msg.data;
      if (msg.type === 'begin') {
        const full = rgString(d.path) ?? '';
        const rel = full.startsWith(prefix) ? full.slice(prefix.length) : full;
        const ok =
          rgPathIsText(d.path) &&
          // A file below a name no path can address is skipped, as listings skip it.
          rel.split('/').every(isAddressableName) &&
          (plan.filter === undefined || plan.filter(rel)) &&
          (s.keep === undefined || s.keep(scopePrefix + rel));
        current = { rel, ok, matches: [] };
      } else if (msg.type === 'match' && current?.ok) {
        const text = stripTerminator(rgString(d.lines) ?? '');
        const spans: MatchSpan[] = matcher.spans(text);
        if (spans.length === 0) continue;
        const first = spans[0] as MatchSpan;
        current.matches.push({ path: scopePrefix + current.rel, line: d.line_number ?? 0, text, matchStart: first.start, matchEnd: first.end, spans });
      } else if (msg.type === 'end' && current !== undefined) {
        const file = current;
        current = undefined;
        if (!file.ok) continue;
        const source: AsyncIterable<GrepMatch> | GrepMatch[] =
          d.binary_offset !== null && d.binary_offset !== undefined ? s.rescan(scopePrefix + file.rel, remaining) : file.matches;
        for await (const m of source) {
          produced = true;
          yield m;
          if (--remaining <= 0) return;
        }
      }
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
