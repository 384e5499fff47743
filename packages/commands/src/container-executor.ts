/**
 * Commands in the container of a container workspace, through the Docker
 * Engine API: an exec of `sh -c` in the workspace directory, as the
 * workspace's user, its output demultiplexed as it streams, its input
 * written to the exec's connection. The Engine API cannot signal an exec,
 * so the command records its process id first, and stopping it is a second
 * exec that kills its session (the engine starts an exec as a session
 * leader), its children and itself.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { ContainerFilesystem } from '@ctxfs/container';
import type { ExecutionEnd, ExecutionRequest, Executor } from './execution.ts';
import { BASE_ENV } from './execution.ts';
import { feed } from './host-executor.ts';

/**
 * Runs commands inside the workspace's container.
 *
 * @example
 * ```ts
 * const fs = await ContainerFilesystem.open({ container: 'dev', workdir: '/work' });
 * const runner = new CommandRunner(session, { executor: new ContainerExecutor(fs) });
 * ```
 */
export class ContainerExecutor implements Executor {
  readonly kind = 'container';
  /** The container is the confinement: the command sees what the container sees, as any process in it. */
  readonly confined = true;
  readonly where: string;
  readonly #fs: ContainerFilesystem;

  constructor(fs: ContainerFilesystem) {
    this.#fs = fs;
    this.where = `${fs.workdir} in container ${fs.containerRef}`;
  }

  async start(request: ExecutionRequest): Promise<ExecutionEnd> {
    const pidFile = `/tmp/.ctxfs-exec-${randomBytes(6).toString('hex')}.pid`;
    const dir = request.cwd === '' ? this.#fs.workdir : `${this.#fs.workdir}/${request.cwd}`;
    const env = Object.entries({ ...BASE_ENV, HOME: this.#fs.workdir, ...request.env }).map(([k, v]) => `${k}=${v}`);
    return await this.#run(request, dir, env, pidFile);
  }

  /** Runs the exec to its end, stopping it when the request's signal aborts. */
  async #run(request: ExecutionRequest, dir: string, env: string[], pidFile: string): Promise<ExecutionEnd> {
    const container = this.#fs.container;
    const { uid, gid } = this.#fs.user;
    const exec = await container.exec({
      Cmd: ['sh', '-c', 'echo $$ > "$0"; exec sh -c "$1"', pidFile, request.command],
      WorkingDir: dir,
      User: `${uid}:${gid}`,
      Env: env,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const socket = (await exec.start({ hijack: true, stdin: true })) as unknown as NodeJS.ReadWriteStream & { destroy(): void; end(chunk?: Uint8Array): void };
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on('data', (c: Buffer) => request.onStdout(c));
    stderr.on('data', (c: Buffer) => request.onStderr(c));
    this.#fs.docker.modem.demuxStream(socket, stdout, stderr);
    feed(
      request.stdin,
      (chunk) => socket.write(chunk),
      () => socket.end(),
    );
    let ended = false;
    const stop = async (): Promise<void> => {
      // Its session, its children and itself (busybox's and procps's pkill both take -s and -P). Stopped
      // right after it started, the command may not have written its pid yet: tried again until it has, or has ended.
      for (let attempt = 0; attempt < 100 && !ended; attempt++) {
        const killer = await container.exec({
          Cmd: [
            'sh',
            '-c',
            'p=$(cat "$0" 2>/dev/null) && [ -n "$p" ] || exit 3; pkill -KILL -s "$p"; pkill -KILL -P "$p"; kill -KILL "$p"; rm -f "$0"',
            pidFile,
          ],
          User: '0:0',
        });
        await killer.start({ hijack: true, stdin: false }).then((s) => new Promise((r) => (s as NodeJS.ReadableStream).on('end', r).resume()));
        if ((await killer.inspect()).ExitCode !== 3) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const onAbort = (): void => {
      stop().catch(() => {});
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    if (request.signal.aborted) onAbort();
    await new Promise<void>((resolve) => {
      socket.once('end', () => resolve());
      socket.once('close', () => resolve());
      socket.once('error', () => resolve());
    });
    ended = true;
    request.signal.removeEventListener('abort', onAbort);
    stdout.end();
    stderr.end();
    let exitCode: number | null = null;
    for (let i = 0; i < 200; i++) {
      const info = await exec.inspect();
      if (!info.Running) {
        exitCode = info.ExitCode ?? null;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    // The pid file is the command's to leave behind only if it was stopped; remove it either way.
    container
      .exec({ Cmd: ['rm', '-f', pidFile], User: '0:0' })
      .then((e) => e.start({ hijack: true, stdin: false }))
      .then((s) => (s as NodeJS.ReadableStream).resume())
      .catch(() => {});
    return { exitCode: request.signal.aborted ? null : exitCode };
  }
}
