/**
 * Commands on the host backend, in the workspace's directory.
 *
 * Confined (`bubblewrap`): the command sees the whole system read-only, the
 * workspace read-write, a private `/tmp`, `/dev` and `/proc`, its own
 * process namespace (stopping it stops every process it started) and no
 * network. Unconfined (`sh -c` in the root): nothing keeps the command
 * inside the workspace — only where the policy says `[commands] unconfined
 * = true` (the runner asks it) and where bubblewrap is missing or cannot
 * start (a container without user namespaces).
 *
 * Either way the command starts from a minimal environment, never the
 * embedding process's (which may hold credentials).
 *
 * @module
 */

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync, realpathSync, type Stats, statSync } from 'node:fs';
import { join } from 'node:path';
import { fsError } from '@ctxfs/core';
import { BASE_ENV, type ExecutionEnd, type ExecutionRequest, type Executor, startDirectory } from './execution.ts';

let bwrapWorks: boolean | undefined;

/**
 * Whether bubblewrap is installed and can start a sandbox here (it needs
 * user namespaces, or root). Tried once per process.
 *
 * @example
 * ```ts
 * if (!bubblewrapAvailable()) console.warn('host commands need [commands] unconfined = true');
 * ```
 */
export function bubblewrapAvailable(): boolean {
  if (bwrapWorks === undefined) {
    const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-net', '--unshare-pid', '--die-with-parent', '--', 'true'], {
      stdio: 'ignore',
      timeout: 10_000,
    });
    bwrapWorks = r.error === undefined && r.status === 0;
  }
  return bwrapWorks;
}

/** Writes a command's input as it comes (bytes at once, or a stream's chunks), then ends it. */
export function feed(stdin: Uint8Array | AsyncIterable<Uint8Array> | undefined, write: (chunk: Uint8Array) => void, end: () => void): void {
  if (stdin === undefined || stdin instanceof Uint8Array) {
    if (stdin !== undefined) write(stdin);
    end();
    return;
  }
  void (async () => {
    try {
      for await (const chunk of stdin) write(chunk);
    } finally {
      end();
    }
  })().catch(() => {});
}

/** Runs a child to its end, streaming its output, stopping it when the signal aborts. */
function runChild(child: ChildProcess, request: ExecutionRequest, stop: () => void): Promise<ExecutionEnd> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => stop();
    request.signal.addEventListener('abort', onAbort, { once: true });
    // Stopped before it started (a kill right after the spawn): stopped at once.
    if (request.signal.aborted) onAbort();
    child.stdout?.on('data', (c: Buffer) => request.onStdout(c));
    child.stderr?.on('data', (c: Buffer) => request.onStderr(c));
    child.stdin?.on('error', () => {}); // a command that exits without reading its input
    feed(
      request.stdin,
      (chunk) => child.stdin?.write(chunk),
      () => child.stdin?.end(),
    );
    child.once('error', (err) => {
      request.signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.once('close', (code) => {
      request.signal.removeEventListener('abort', onAbort);
      resolve({ exitCode: request.signal.aborted ? null : code });
    });
    // Stopped, it is done when it exits: a process it left behind must not keep the call open through its output pipes.
    child.once('exit', () => {
      if (!request.signal.aborted) return;
      child.stdout?.destroy();
      child.stderr?.destroy();
      request.signal.removeEventListener('abort', onAbort);
      resolve({ exitCode: null });
    });
  });
}

/**
 * Runs commands on a host workspace, confined by bubblewrap.
 *
 * @example
 * ```ts
 * const runner = new CommandRunner(session, { executor: new BubblewrapExecutor('/repo') });
 * ```
 */
export class BubblewrapExecutor implements Executor {
  readonly kind = 'bubblewrap';
  readonly confined = true;
  readonly where: string;
  readonly #root: string;

  /** `root`: the workspace directory on the host. */
  constructor(root: string) {
    this.#root = realpathSync(root);
    this.where = 'a bubblewrap sandbox on the host (the system read-only, no network)';
  }

  start(request: ExecutionRequest): Promise<ExecutionEnd> {
    const root = this.#root;
    const mount = request.mountPath ?? root;
    const bindable = mountable(mount);
    if (bindable !== true) return Promise.reject(bindable);
    const args = [
      // The system read-only, entry by entry rather than `/` whole, so that `/` itself is the sandbox's own and
      // a mount path below it (`/workspace`) can be made without touching the host.
      ...systemBinds(),
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      // After /tmp, so a workspace below /tmp is bound over the private one.
      '--bind',
      root,
      mount,
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--chdir',
      startDirectory(mount, request.cwd),
      '--',
      'sh',
      '-c',
      request.command,
    ];
    const env = { ...BASE_ENV, HOME: mount, PWD: startDirectory(mount, request.cwd), ...request.env };
    const child = spawn('bwrap', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    // bwrap is the sandbox's init: killing it ends every process inside.
    return runChild(child, request, () => child.kill('SIGKILL'));
  }
}

let system: string[] | undefined;

/** bubblewrap's arguments that show each entry of the host's `/` read-only (links as links); `/dev`, `/proc` and `/tmp` are the sandbox's own. */
function systemBinds(): string[] {
  if (system === undefined) {
    system = [];
    for (const entry of readdirSync('/', { withFileTypes: true })) {
      if (entry.name === 'dev' || entry.name === 'proc' || entry.name === 'tmp') continue;
      const path = `/${entry.name}`;
      if (entry.isSymbolicLink()) system.push('--symlink', readlinkSync(path), path);
      else system.push('--ro-bind', path, path);
    }
  }
  return system;
}

/**
 * Whether bubblewrap can show the workspace at `mount`: below `/tmp` or a
 * top-level name the host lacks it makes the directories in its own
 * filesystems; anywhere else on the read-only system the directory must
 * already exist (the sandbox cannot create it).
 */
function mountable(mount: string): true | Error {
  const top = mount.split('/')[1] ?? '';
  if (mount === '/' || top === 'dev' || top === 'proc')
    return fsError('EUNSUPPORTED', 'exec', mount, {
      reason: 'bubblewrap cannot show the workspace at the root or under /dev or /proc',
      hint: 'choose a mount path such as /workspace',
    });
  if (top === 'tmp' || !existsSync(`/${top}`)) return true;
  let dir: Stats | undefined;
  try {
    dir = statSync(mount);
  } catch {}
  if (dir?.isDirectory() === true) return true;
  return fsError('EUNSUPPORTED', 'exec', mount, {
    reason: `bubblewrap cannot make ${mount}: /${top} is read-only in the sandbox and has no such directory`,
    hint: 'choose a mount path under a top-level name of its own (such as /workspace) or under /tmp',
  });
}

/**
 * Runs commands in a host workspace's directory with nothing to confine
 * them — what the runner uses only where the policy allows it.
 */
export class UnconfinedExecutor implements Executor {
  readonly kind = 'unconfined';
  readonly confined = false;
  readonly where = 'the host, unconfined (a command can reach anything the ctxfs process can)';
  readonly #root: string;

  constructor(root: string) {
    this.#root = realpathSync(root);
  }

  start(request: ExecutionRequest): Promise<ExecutionEnd> {
    if (request.mountPath !== undefined && request.mountPath !== this.#root)
      return Promise.reject(
        fsError('EUNSUPPORTED', 'exec', request.mountPath, {
          reason: 'an unconfined command sees the workspace only where it is on the host, not at a mount path',
          hint: 'install bubblewrap so commands run confined, or use paths relative to the working directory',
        }),
      );
    const child = spawn('sh', ['-c', request.command], {
      cwd: join(this.#root, request.cwd),
      env: { ...BASE_ENV, HOME: this.#root, ...request.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    return runChild(child, request, () => {
      // The command's process group: the shell and what it started.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    });
  }
}
