/**
 * Command output too large to hand a model at once, kept in a scratch file
 * inside the workspace's state (`command-output/` beside the state store's
 * database; a private temporary directory of this process when the store
 * is in memory), so the rest can be read by line range later. Only the
 * newest {@link KEPT_OUTPUTS} are kept.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fsError } from '@ctxfs/core';

/** How many outputs a workspace keeps. */
export const KEPT_OUTPUTS = 50;

let processDir: string | undefined;

/** The directory for outputs of a workspace whose state is at `statePath`. */
function outputDir(statePath: string): string {
  // Beside a state file; a store in memory or in PostgreSQL (a URL) has no directory of its own.
  if (isAbsolute(statePath)) return join(dirname(statePath), 'command-output');
  if (processDir === undefined) {
    processDir = mkdtempSync(join(tmpdir(), 'ctxfs-command-output-'));
    const dir = processDir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return processDir;
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
  mkdirSync(dir, { recursive: true });
  const id = randomBytes(6).toString('hex');
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
  let text: string;
  try {
    text = readFileSync(join(outputDir(statePath), `${id}.txt`), 'utf8');
  } catch {
    throw fsError('ENOENT', 'read', id, { reason: 'no kept output has this id (only the newest 50 are kept)', hint: 'run the command again' });
  }
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  const from = Math.max(1, start);
  const to = Math.min(all.length, end);
  return { lines: from > to ? [] : all.slice(from - 1, to), start: from, end: to, total: all.length };
}
