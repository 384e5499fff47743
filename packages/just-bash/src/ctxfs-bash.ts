/**
 * just-bash's `Bash` over a context session: each `exec` is one command of
 * the session — decided by the policy's command rules, recorded in the
 * audit with its command line, and what it changed recorded as one change
 * of history (`undo(path)` restores what the script did to each file).
 *
 * @module
 */

import type { ContextSession } from '@ctxfs/context';
import { isFsError } from '@ctxfs/core';
import { Bash, type BashExecResult, type BashOptions, type ExecOptions } from 'just-bash';
import { asBashResult } from './bash-errors.ts';
import { CtxfsBashFs } from './ctxfs-bash-fs.ts';
import { redirectionGroups } from './redirection-groups.ts';

/** Options of {@link CtxfsBash}: just-bash's, less the filesystem (the session's) and its initial files. */
export type CtxfsBashOptions = Omit<BashOptions, 'fs' | 'files'>;

/** What an exec reports: just-bash's result, and the files it changed as history recorded them. */
export interface CtxfsExecResult extends BashExecResult {
  /** Each changed file with the history position `undo` reverts. */
  readonly changes: ReadonlyArray<{ readonly path: string; readonly op: string; readonly seq: number }>;
}

/**
 * Bash over a ctxfs workspace, with each exec a command of the session.
 *
 * @example
 * ```ts
 * const ctx = await createContext({ fs: new MemoryFilesystem({ files: { 'a.txt': 'one\n' } }) });
 * const bash = new CtxfsBash(ctx);
 * const r = await bash.exec("sed -i 's/one/two/' a.txt");
 * r.changes; // [{ path: 'a.txt', op: 'write', seq: 2 }]
 * await ctx.undo('a.txt'); // 'one\n' again
 * ```
 */
export class CtxfsBash extends Bash {
  readonly session: ContextSession;
  readonly #fs: CtxfsBashFs;

  constructor(session: ContextSession, options: CtxfsBashOptions = {}) {
    const fs = new CtxfsBashFs(session);
    super({ cwd: '/', ...options, fs });
    this.session = session;
    this.#fs = fs;
    // A redirection that cannot be opened fails its command and the script goes on, as in bash.
    this.registerTransformPlugin(redirectionGroups);
  }

  /**
   * Runs a script as one command of the session. A command the policy
   * refuses does not run: its result is bash's "Permission denied" (exit
   * status 126) with the policy's reason. A redirection that cannot be
   * opened fails its command and the script goes on, as in bash (see
   * {@link redirectionGroups}). A file call whose error still escapes
   * just-bash (a plain `Bash` without the transform lets a redirection's
   * do so) ends the script with that call's line (`bash: /a.txt: Permission
   * denied`) and exit status 1; what it printed before is lost.
   */
  override async exec(commandLine: string, options?: ExecOptions): Promise<CtxfsExecResult> {
    const script = (): Promise<BashExecResult> => asBashResult(() => super.exec(commandLine, options));
    try {
      const { value, changes } = await this.session.command(commandLine, (run) => this.#fs.within(run, script), {
        params: { via: 'just-bash', cwd: options?.cwd ?? this.getCwd() },
        outcome: (r) => ({ bytes: r.stdout.length + r.stderr.length, code: r.exitCode === 0 ? undefined : `exit ${r.exitCode}` }),
      });
      return Object.assign(value, { changes: changes.map((c) => ({ path: c.path, op: c.op, seq: c.seq })) });
    } catch (err) {
      if (!isFsError(err, 'EDENIED') && !isFsError(err, 'ELIMIT')) throw err;
      return { stdout: '', stderr: `bash: ${err.reason ?? 'refused'}: Permission denied\n`, exitCode: 126, env: {}, changes: [] };
    }
  }
}
