/**
 * Commands on a backend no process can reach (memory, or any backend
 * without an executor): just-bash's bash over the same workspace through
 * `CtxfsBashFs`, so the command's file calls pass the policy and what it
 * changes is recorded as one change of history. At a mount path the
 * workspace is mounted there in a scratch tree that lasts one command.
 *
 * @module
 */

import type { ContextSession } from '@ctxfs/context';
import { asBashResult, CtxfsBashFs } from '@ctxfs/just-bash';
import { Bash, type BashOptions, InMemoryFs, MountableFs } from 'just-bash';

/** just-bash's execution limits. */
export type JustBashLimits = NonNullable<BashOptions['executionLimits']>;

import { type ExecutionEnd, type ExecutionRequest, type Executor, startDirectory } from './execution.ts';

/** Options of {@link JustBashExecutor}. */
export interface JustBashExecutorOptions {
  /** just-bash's execution limits (its defaults otherwise); the time limit is the runner's. */
  readonly limits?: JustBashLimits | undefined;
}

/**
 * What just-bash prints when one of its limits stops a script (exit status
 * 126: `bash: word expansion: string length limit exceeded (67108864
 * bytes)`, `bash: while loop: too many iterations (10000), …`), and the
 * kind of limit.
 */
const LIMIT_MESSAGES: ReadonlyArray<{ readonly re: RegExp; readonly kind: 'output' | 'memory' | 'time' | 'work' }> = [
  { re: /output size limit|maxOutputSize/i, kind: 'output' },
  { re: /time limit|timed out|execution time|maxExecutionTimeMs/i, kind: 'time' },
  { re: /too many iterations|iteration limit|command count|call depth|recursion|work limit|traversal/i, kind: 'work' },
  { re: /limit exceeded/i, kind: 'memory' },
];

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of stream) parts.push(chunk);
  return Buffer.concat(parts);
}

/**
 * Runs commands with just-bash over the session's workspace.
 *
 * @example
 * ```ts
 * const runner = new CommandRunner(session, { executor: new JustBashExecutor(session) });
 * ```
 */
export class JustBashExecutor implements Executor {
  readonly kind = 'just-bash';
  /** just-bash reaches nothing but the workspace through ctxfs: confined by construction. */
  readonly confined = true;
  readonly where = "just-bash's bash (a shell in JavaScript over the workspace's files; no host programs)";
  readonly #fs: CtxfsBashFs;
  readonly #limits: JustBashLimits | undefined;

  constructor(session: ContextSession, options: JustBashExecutorOptions = {}) {
    this.#fs = new CtxfsBashFs(session);
    this.#limits = options.limits;
  }

  async start(request: ExecutionRequest): Promise<ExecutionEnd> {
    const mount = request.mountPath ?? '/';
    const cwd = mount === '/' ? `/${request.cwd}` : startDirectory(mount, request.cwd);
    // just-bash takes its input whole: a stream is read to its end first.
    const stdin = request.stdin === undefined || request.stdin instanceof Uint8Array ? request.stdin : await readAll(request.stdin);
    const bash = new Bash({
      // Below a mount path the workspace is mounted into a scratch tree of just-bash's own, kept for this command only.
      fs: mount === '/' ? this.#fs : new MountableFs({ base: new InMemoryFs(), mounts: [{ mountPoint: mount, filesystem: this.#fs }] }),
      cwd,
      env: { HOME: mount, ...request.env },
      // The runner's own timer stops a command at its time limit and says so in the result; just-bash's limit is
      // only the backstop, later, so the two never race (when just-bash's won, the command ended with its exit
      // status 124 and no limit stated).
      executionLimits: { maxExecutionTimeMs: request.timeoutMs + 1_000, ...this.#limits },
    });
    const result = await this.#fs.within(request.run, () =>
      asBashResult(() =>
        bash.exec(request.command, {
          cwd,
          signal: request.signal,
          ...(stdin === undefined ? {} : { stdin: Buffer.from(stdin).toString('latin1'), stdinKind: 'bytes' as const }),
        }),
      ),
    );
    // just-bash hands back the whole output at the end; a "bytes" stdout is one char per byte.
    const bytes = 'stdoutKind' in result && result.stdoutKind === 'bytes';
    if (result.stdout !== '') request.onStdout(Buffer.from(result.stdout, bytes ? 'latin1' : 'utf8'));
    if (result.stderr !== '') request.onStderr(Buffer.from(result.stderr, 'utf8'));
    if (request.signal.aborted) return { exitCode: null };
    const hit = result.exitCode === 126 ? LIMIT_MESSAGES.find((m) => m.re.test(result.stderr)) : undefined;
    const line = hit ? (result.stderr.split('\n').find((l) => hit.re.test(l)) ?? '').trim() : '';
    return { exitCode: result.exitCode, limit: hit ? { kind: hit.kind, detail: line } : undefined };
  }
}
