/**
 * Command output too large to hand a model at once, kept so the rest can be
 * read by line range later: in a scratch file inside the workspace's state
 * (`command-output/` beside the state store's database), or, for a state
 * with no directory of its own (in memory, or a PostgreSQL URL), in this
 * process's memory. Only the newest {@link KEPT_OUTPUTS} are kept.
 *
 * Why memory and not a temporary directory for those: a directory made for
 * the process was removed at its exit, and a process ended by a signal (an
 * MCP client stopping its server with SIGTERM, a test runner's worker) runs
 * no exit handler, so each one left a directory of command output in the
 * system's temporary directory. Such a state is the process's own (or not on
 * this host's disk at all), so its outputs are held as long as it is.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fsError } from '@ctxfs/core';

/** How many outputs a workspace keeps. */
export const KEPT_OUTPUTS = 50;

/** How many characters of output this process holds in memory at most, for states with no directory; the newest output is held whatever its size. */
export const HELD_OUTPUT_CHARS = 64 * 1024 * 1024;

/** Outputs held in memory, oldest first (a Map keeps insertion order). */
const held = new Map<string, string>();
let heldChars = 0;

/** The directory for outputs of a workspace whose state is at `statePath`, or `undefined` when they are held in memory. */
function outputDir(statePath: string): string | undefined {
  // Beside a state file; a store in memory or in PostgreSQL (a URL) has no directory of its own.
  return isAbsolute(statePath) ? join(dirname(statePath), 'command-output') : undefined;
}

function hold(id: string, text: string): void {
  held.set(id, text);
  heldChars += text.length;
  for (const [old, kept] of held) {
    if (old === id || (held.size <= KEPT_OUTPUTS && heldChars <= HELD_OUTPUT_CHARS)) break;
    held.delete(old);
    heldChars -= kept.length;
  }
}

const ID = /^[0-9a-f]{12}$/;

/**
 * Keeps `text` and returns its id.
 *
 * @example
 * ```ts
 * const id = keepOutput(session.statePath, bigText);
 * readOutputLines(session.statePath, id, 200, 260).lines;
 * ```
 */
export function keepOutput(statePath: string, text: string): string {
  const dir = outputDir(statePath);
  const id = randomBytes(6).toString('hex');
  if (dir === undefined) {
    hold(id, text);
    return id;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${id}.txt`), text, { mode: 0o600 });
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .map((f) => ({ f, t: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const old of files.slice(KEPT_OUTPUTS)) rmSync(join(dir, old.f), { force: true });
  return id;
}

/** Lines `start`..`end` (1-based, inclusive, clamped) of a kept output, and how many it has. */
export function readOutputLines(statePath: string, id: string, start: number, end: number): { lines: string[]; start: number; end: number; total: number } {
  if (!ID.test(id)) throw fsError('EINVAL', 'read', id, { reason: 'not an output id', hint: 'use the id a run_command result gave' });
  const dir = outputDir(statePath);
  let text: string | undefined;
  try {
    text = dir === undefined ? held.get(id) : readFileSync(join(dir, `${id}.txt`), 'utf8');
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    const kept =
      dir === undefined
        ? `only the newest ${KEPT_OUTPUTS} are kept, ${HELD_OUTPUT_CHARS / 1024 / 1024} Mi characters at most, while this process runs`
        : `only the newest ${KEPT_OUTPUTS} are kept`;
    throw fsError('ENOENT', 'read', id, { reason: `no kept output has this id (${kept})`, hint: 'run the command again' });
  }
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  const from = Math.max(1, start);
  const to = Math.min(all.length, end);
  return { lines: from > to ? [] : all.slice(from - 1, to), start: from, end: to, total: all.length };
}
