/**
 * Commands in the container of a container workspace, through the Docker
 * Engine API: an exec of `sh -c` in the workspace directory, as the
 * workspace's user, its output demultiplexed as it streams, its input
 * written to the exec's connection. The Engine API cannot signal an exec,
 * so the command records its process id first, and stopping it is a second
 * exec that kills its session (the engine starts an exec as a session
 * leader), its children and itself. Asked to show the workspace at a
 * mount path, the executor makes that path a link to the working directory
 * once (as root), and starts commands under it.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { ContainerFilesystem } from '@ctxfs/container';
import { fsError } from '@ctxfs/core';
import type { ExecutionEnd, ExecutionRequest, Executor } from './execution.ts';
import { BASE_ENV, startDirectory } from './execution.ts';
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
  /** Mount paths linked to the working directory, or being linked. */
  readonly #links = new Map<string, Promise<void>>();

  constructor(fs: ContainerFilesystem) {
    this.#fs = fs;
    this.where = `container ${fs.containerRef}`;
  }

  async start(request: ExecutionRequest): Promise<ExecutionEnd> {
    const pidFile = `/tmp/.ctxfs-exec-${randomBytes(6).toString('hex')}.pid`;
    const root = request.mountPath ?? this.#fs.workdir;
    try {
      if (root !== this.#fs.workdir) await this.#link(root);
      const dir = startDirectory(root, request.cwd);
      // PWD: the shell keeps the path it was started under (the link) rather than the one the link leads to.
      const env = Object.entries({ ...BASE_ENV, HOME: root, PWD: dir, ...request.env }).map(([k, v]) => `${k}=${v}`);
      return await this.#run(request, dir, env, pidFile);
    } catch (err) {
      // A stopped, paused or removed container is said as the file calls say it, not as the engine's raw refusal.
      throw await this.#fs.engineFailure('exec', err);
    }
  }

  /** Makes `mount` a link to the working directory, once; refused where it is anything else, or inside the workspace. */
  #link(mount: string): Promise<void> {
    let made = this.#links.get(mount);
    if (made === undefined) {
      made = this.#makeLink(mount);
      this.#links.set(mount, made);
      // A failure is not remembered: the container may be fixed, and the next command tries again.
      made.catch(() => this.#links.delete(mount));
    }
    return made;
  }

  async #makeLink(mount: string): Promise<void> {
    const workdir = this.#fs.workdir;
    const refuse = (reason: string, hint: string): never => {
      throw fsError('EUNSUPPORTED', 'exec', mount, { reason, hint });
    };
    if (mount === '/' || workdir.startsWith(`${mount}/`) || mount.startsWith(`${workdir}/`))
      refuse(
        `the container cannot show the workspace at ${mount}: it contains the working directory, or lies inside it`,
        'choose a mount path apart from the working directory, such as /workspace',
      );
    const { code, stderr } = await this.#asRoot(
      // 0: made or already there; 3: the path is something else; other: mkdir or ln failed (a read-only filesystem).
      'if [ -L "$0" ]; then [ "$(readlink "$0")" = "$1" ] && exit 0; exit 3; fi; [ -e "$0" ] && exit 3; mkdir -p "$(dirname "$0")" && ln -s "$1" "$0"',
      mount,
      workdir,
    );
    if (code === 0) return;
    if (code === 3) refuse(`${mount} already exists in the container and is not a link to the workspace`, 'choose another mount path');
    refuse(
      `the container cannot make the link ${mount}: ${stderr.trim() || `exit status ${code}`}`,
      'choose a mount path on a writable filesystem of the container, such as /tmp/workspace',
    );
  }

  /** Runs `sh -c script args…` in the container as root to its end: its exit status and what it said on stderr. */
  async #asRoot(script: string, ...args: string[]): Promise<{ code: number | null; stderr: string }> {
    const exec = await this.#fs.container.exec({ Cmd: ['sh', '-c', script, ...args], User: '0:0', AttachStdout: true, AttachStderr: true });
    const stream = (await exec.start({ hijack: true, stdin: false })) as unknown as NodeJS.ReadableStream;
    const said: Buffer[] = [];
    const stderr = new PassThrough().on('data', (c: Buffer) => said.push(c));
    this.#fs.docker.modem.demuxStream(stream, new PassThrough().resume(), stderr);
    await new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    return { code: (await exec.inspect()).ExitCode ?? null, stderr: Buffer.concat(said).toString('utf8') };
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
        const killed = await this.#asRoot(
          'p=$(cat "$0" 2>/dev/null) && [ -n "$p" ] || exit 3; pkill -KILL -s "$p"; pkill -KILL -P "$p"; kill -KILL "$p"; rm -f "$0"',
          pidFile,
        );
        if (killed.code !== 3) return;
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
