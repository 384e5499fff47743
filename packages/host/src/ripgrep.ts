/**
 * Native grep through ripgrep (`rg --json`), agreeing with the shared JS
 * scanner match for match:
 *
 * - rg walks in the JS walk's order (`--sort path`: depth-first, siblings by
 *   name), does not follow symlinks, skips temp files and, unless `dot`,
 *   dotfiles; ignore files are not consulted (`--no-ignore`), as the scanner
 *   does not consult them.
 * - rg only finds candidate lines: it is given the pattern only when its
 *   meaning in Rust regex syntax is the same or wider than in JavaScript
 *   (a conservative whitelist), and every line it reports is matched again
 *   by the JS matcher, which also computes the spans. Other patterns are
 *   searched by the JS scanner.
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

// Escapes whose Rust meaning is the same as, or wider than, the JavaScript one.
const SAFE_ESCAPES = new Set('.*+?()[]{}|^$\\/-dwst #&~:=!<>,\'"@%`_');

/**
 * True when `pattern` (JavaScript syntax) can be handed to rg: rg then finds
 * every line the JS regex would (possibly more, which the JS re-check drops).
 */
export function rgCompatible(pattern: string, literal: boolean): boolean {
  if (/[\r\n]/.test(pattern)) return false;
  if (literal) return true;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined || !SAFE_ESCAPES.has(next)) return false;
      i++;
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      // Only plain non-capturing groups; no lookaround, named groups or inline flags.
      if (pattern[i + 2] !== ':') return false;
      continue;
    }
    if (c === '[' && (pattern[i + 1] === ':' || pattern[i + 1] === '[')) return false; // POSIX classes / nested sets mean other things
    if (c === '&' && pattern[i + 1] === '&') return false; // Rust set intersection
    if (c === '~' && pattern[i + 1] === '~') return false;
    if (c === '-' && pattern[i + 1] === '-') return false; // Rust set difference
    if (c.charCodeAt(0) < 0x20) return false;
  }
  return true;
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
  let rest = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = rest + chunk;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      yield text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  if (rest !== '') yield rest;
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
  if (!rgCompatible(matcher.source, flags.literal)) {
    yield* s.fallback();
    return;
  }
  const args = ['--json', '--no-config', '--no-ignore', '--hidden', '--binary', '--sort', 'path', '--crlf', '--no-messages', '-g', `!${TEMP_PREFIX}*`];
  if (!plan.dot) args.push('-g', '!.*');
  for (const name of s.exclude ?? []) args.push('-g', `!${name.replace(/[\\*?[\]{}!]/g, '\\$&')}`);
  args.push(flags.ignoreCase ? '--ignore-case' : '--case-sensitive');
  if (flags.literal) args.push('--fixed-strings');
  args.push('--regexp', matcher.source, '--', '.');
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
