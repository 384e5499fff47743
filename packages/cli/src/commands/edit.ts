/**
 * The commands that change files or look at their history: patch, replace,
 * history, diff, undo, rollback. Each is one tool call; `patch --dry-run`
 * is apply_patch's own dry run, so what it shows — the diff, or the
 * refusal — is what the real call would do, and nothing is written.
 *
 * @module
 */

import { readFile } from 'node:fs/promises';
import { text as readAll } from 'node:stream/consumers';
import { versionRef } from '../arguments.ts';
import { CliError } from '../exit-codes.ts';
import type { Action } from '../program.ts';
import { type CommandWords, defined, runTool } from '../tool-command.ts';

type Opts = Readonly<Record<string, unknown>>;

/** Where each command takes each argument of its tool (an argument the tool refuses is named so). */
const WORDS = {
  patch: { command: 'patch', words: { patch: 'the patch ([file] or stdin)', path: '--path', message: '--message' } },
  replace: {
    command: 'replace',
    words: { path: '<path>', old_text: '<old>', new_text: '<new>', occurrence: '--all, --first or --nth', regex: '--regex', message: '--message' },
  },
  history: { command: 'history', words: { path: '<path>', limit: '--limit' } },
  diff: { command: 'diff', words: { path: '<path>', from: '[from]', to: '[to]' } },
  undo: { command: 'undo', words: { path: '<path>', change: '--change', message: '--message' } },
  rollback: { command: 'rollback', words: { path: '<path>', to: '<to>', message: '--message' } },
} as const satisfies Record<string, CommandWords>;

/** The patch text: from a file, or stdin when the file is `-` or left out. */
async function patchText(file: string | undefined): Promise<string> {
  if (file !== undefined && file !== '-') {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as { code?: string }).code === 'ENOENT' ? 'ENOENT' : 'EINVAL';
      throw new CliError(code, `cannot read the patch ${file}: ${(err as Error).message}`);
    }
  }
  if (process.stdin.isTTY) throw new CliError('EINVAL', 'no patch: name a file, or pipe one in (git diff | ctxfs patch)');
  return readAll(process.stdin);
}

/** `ctxfs patch [file]` → apply_patch (`--dry-run`: its dry run, which shows the diff and changes nothing). */
export const patch: Action = async (g, [file], o: Opts) =>
  runTool(
    g,
    'apply_patch',
    defined({ patch: await patchText(file), path: o.path, message: o.message, dry_run: o.dryRun === true ? true : undefined }),
    'diff',
    WORDS.patch,
  );

/** `ctxfs replace <path> <old> <new>` → replace. */
export const replace: Action = (g, [path, oldText, newText], o: Opts) => {
  const chosen = [o.all === true && 'all', o.first === true && 'first', o.nth].filter((x) => x !== undefined && x !== false);
  if (chosen.length > 1) throw new CliError('EINVAL', '--all, --first and --nth: choose one');
  return runTool(
    g,
    'replace',
    defined({ path, old_text: oldText, new_text: newText, occurrence: chosen[0], regex: o.regex, message: o.message }),
    'diff',
    WORDS.replace,
  );
};

/** `ctxfs history <path>` → get_file_history. */
export const history: Action = (g, [path], o: Opts) => runTool(g, 'get_file_history', defined({ path, limit: o.limit }), 'plain', WORDS.history);

/** `ctxfs diff <path> [from] [to]` → get_diff. */
export const diff: Action = (g, [path, from, to]) =>
  runTool(
    g,
    'get_diff',
    defined({ path, from: from === undefined ? undefined : versionRef(from), to: to === undefined ? undefined : versionRef(to) }),
    'diff',
    WORDS.diff,
  );

/** `ctxfs undo <path>` → undo. */
export const undo: Action = (g, [path], o: Opts) => runTool(g, 'undo', defined({ path, change: o.change, message: o.message }), 'diff', WORDS.undo);

/** `ctxfs rollback <path> <to>` → rollback. */
export const rollback: Action = (g, [path, to = ''], o: Opts) =>
  runTool(g, 'rollback', defined({ path, to: versionRef(to), message: o.message }), 'diff', WORDS.rollback);
