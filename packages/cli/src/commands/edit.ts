/**
 * The commands that change files or look at their history: patch, replace,
 * history, diff, undo, rollback. Each is one tool call; `patch --dry-run`
 * runs the same tool on a copy in memory of the files the patch touches (and
 * the project's policy file), so what it shows — the diff, or the refusal —
 * is what the real call would do, and the workspace is not touched.
 *
 * @module
 */

import { readFile } from 'node:fs/promises';
import { text as readAll } from 'node:stream/consumers';
import type { CallResult } from '@ctxfs/tools';
import { versionRef } from '../arguments.ts';
import { CLI_TOOL_CALLS } from '../call-text.ts';
import { CliError, type ExitCode } from '../exit-codes.ts';
import { agentOf, type GlobalOptions } from '../options.ts';
import type { Action } from '../program.ts';
import { defined, runTool, showResult } from '../tool-command.ts';
import { withFilesystem } from '../workspace.ts';

type Opts = Readonly<Record<string, unknown>>;

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

/** The paths a patch reads or writes, as its headers name them (and `--path`). */
async function touchedPaths(patch: string, headerless: string | undefined): Promise<string[]> {
  const { parsePatch, PatchParseError, PROJECT_CONFIG_PATH } = await import('@ctxfs/context');
  const paths = new Set<string>([PROJECT_CONFIG_PATH]);
  if (headerless !== undefined) paths.add(headerless);
  try {
    for (const fp of parsePatch(patch)) for (const p of [fp.oldPath, fp.newPath]) if (p !== undefined) paths.add(p);
  } catch (err) {
    // The tool refuses a patch that does not parse, with the line; the dry run shows that refusal.
    if (!(err instanceof PatchParseError)) throw err;
  }
  return [...paths];
}

/** A result of the copy without its history numbers (`#1`, `seq`): the workspace's history would number the change otherwise. */
function withoutCopyNumbers(result: CallResult): CallResult {
  const strip = (text: string) => text.replace(/ \(#\d+\)/g, '');
  const { seq: _seq, ...data } = result.data;
  if (typeof data.message === 'string') data.message = strip(data.message);
  if (Array.isArray(data.files))
    data.files = data.files.map((f: Record<string, unknown>) => Object.fromEntries(Object.entries(f).filter(([k]) => k !== 'seq')));
  return { ...result, text: strip(result.text), data };
}

/** Runs apply_patch on a memory copy of what the patch touches; asks no one (nothing is written) but keeps every deny. */
async function dryRun(g: GlobalOptions, args: Record<string, unknown>): Promise<CallResult> {
  const patch = args.patch as string;
  return withFilesystem(g, async (fs) => {
    const [{ MemoryFilesystem }, { callbackApprover, createContext, withoutHostPaths }, { Toolset }, { isFsError }] = await Promise.all([
      import('@ctxfs/memory'),
      import('@ctxfs/context'),
      import('@ctxfs/tools'),
      import('@ctxfs/core'),
    ]);
    const files: Record<string, Uint8Array> = {};
    for (const path of await touchedPaths(patch, args.path as string | undefined)) {
      // A path that is missing (a new file) or not valid is left out; the tool decides what that means.
      if (!(await fs.exists(path).catch(() => false))) continue;
      try {
        files[path] = await fs.readBytes(path);
      } catch (err) {
        // As the real call says it: a link's target outside the workspace is not named.
        throw isFsError(err) ? withoutHostPaths(err) : err;
      }
    }
    const copy = new MemoryFilesystem({ files });
    const ctx = await createContext({
      fs: copy,
      store: ':memory:',
      profile: g.profile ?? 'large',
      agent: agentOf(g),
      safety: { approver: callbackApprover(() => ({ approved: true, approver: 'dry-run' })), ...(g.policyFiles ? {} : { policyFiles: false as const }) },
    });
    try {
      return withoutCopyNumbers(await new Toolset(ctx, { writer: CLI_TOOL_CALLS }).run('apply_patch', args));
    } finally {
      await ctx.close();
      await copy.close();
    }
  });
}

/** `ctxfs patch [file]` → apply_patch (`--dry-run`: on a copy). */
export const patch: Action = async (g, [file], o: Opts): Promise<ExitCode> => {
  const args = defined({ patch: await patchText(file), path: o.path, message: o.message });
  if (o.dryRun !== true) return runTool(g, 'apply_patch', args, 'diff');
  return showResult(g, await dryRun(g, args), 'diff', 'dry run: nothing was changed.');
};

/** `ctxfs replace <path> <old> <new>` → replace. */
export const replace: Action = (g, [path, oldText, newText], o: Opts) => {
  const chosen = [o.all === true && 'all', o.first === true && 'first', o.nth].filter((x) => x !== undefined && x !== false);
  if (chosen.length > 1) throw new CliError('EINVAL', '--all, --first and --nth: choose one');
  return runTool(g, 'replace', defined({ path, old_text: oldText, new_text: newText, occurrence: chosen[0], regex: o.regex, message: o.message }), 'diff');
};

/** `ctxfs history <path>` → get_file_history. */
export const history: Action = (g, [path], o: Opts) => runTool(g, 'get_file_history', defined({ path, limit: o.limit }));

/** `ctxfs diff <path> [from] [to]` → get_diff. */
export const diff: Action = (g, [path, from, to]) =>
  runTool(g, 'get_diff', defined({ path, from: from === undefined ? undefined : versionRef(from), to: to === undefined ? undefined : versionRef(to) }), 'diff');

/** `ctxfs undo <path>` → undo. */
export const undo: Action = (g, [path], o: Opts) => runTool(g, 'undo', defined({ path, change: o.change, message: o.message }), 'diff');

/** `ctxfs rollback <path> <to>` → rollback. */
export const rollback: Action = (g, [path, to = ''], o: Opts) => runTool(g, 'rollback', defined({ path, to: versionRef(to), message: o.message }), 'diff');
