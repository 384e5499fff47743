/**
 * Runs an external tool (ripgrep, find) inside one verified workspace
 * directory. The directory's descriptor becomes the child's fd 3 (libuv sets
 * up stdio before it changes directory) and the child's cwd is
 * `/proc/self/fd/3`, so the tool starts in exactly the inode the root guard
 * checked and every path it opens is relative to it: a directory swapped for
 * a symlink after the check cannot send it outside the root. (The child's own
 * /proc/self stays readable even when this process is not dumpable, e.g.
 * after dropping privileges.)
 *
 * @module
 */

import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import nodePath from 'node:path';
import type { Readable } from 'node:stream';
import type { RootGuard } from './root-guard.ts';

/** A tool running in a verified directory. */
export interface DirectoryProcess {
  /** The tool's output, read ahead of the consumer (see {@link readAhead}). */
  readonly output: AsyncIterable<Buffer>;
  /** Exit code; `null` when killed by a signal, `-1` when it could not start. */
  readonly exited: Promise<number | null>;
  /** The first 4 KiB the tool wrote to stderr. */
  stderr(): string;
  /** Kills the tool if it still runs (for consumers that stop early). */
  stop(): void;
}

/**
 * Spawns `command` with `args` in the workspace directory `dir` (normalized
 * path, checked by `guard`).
 */
export async function spawnInDirectory(guard: RootGuard, dir: string, command: string, args: readonly string[]): Promise<DirectoryProcess> {
  const dirFd = guard.openPath(dir, true);
  let child: ChildProcess;
  try {
    // Loaded on first use: child_process (with net and dgram) is a few ms of a command's start that most never spawn.
    child = process.getBuiltinModule('node:child_process').spawn(command, args, { cwd: '/proc/self/fd/3', stdio: ['ignore', 'pipe', 'pipe', dirFd] });
    // spawn has resolved the cwd once the child exists; wait for that before closing the descriptor.
    await new Promise<void>((resolve) => {
      child.once('spawn', resolve);
      child.once('error', () => resolve());
    });
  } finally {
    fs.closeSync(dirFd);
  }
  const { stdout, stderr: errStream } = child;
  if (stdout === null || errStream === null) throw new Error(`${command} was spawned without pipes`);
  let stderr = '';
  errStream.setEncoding('utf8');
  errStream.on('data', (d: string) => {
    if (stderr.length < 4096) stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code));
    child.on('error', () => resolve(-1));
  });
  return {
    output: readAhead(stdout),
    exited,
    stderr: () => stderr,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** How much output is taken from the pipe ahead of the consumer before the tool is made to wait. */
const READ_AHEAD_BYTES = 8 * 1024 * 1024;

/**
 * The chunks of `stream`, taken from the pipe as they come (up to
 * {@link READ_AHEAD_BYTES} ahead), with a turn of the event loop after the
 * consumer's work on each chunk. Iterated as a stream, a pipe is read only
 * when the consumer has emptied it, so a tool whose output needs work (ripgrep's
 * lines, re-matched one by one) and that work took turns instead of running
 * on two cores at once: rg's 27 MB answer over the bench corpus took 0.62 s
 * alone and 1.2 s with 0.46 s of work on it; read ahead, 0.83–1.0 s.
 */
async function* readAhead(stream: Readable): AsyncGenerator<Buffer> {
  const queue: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued > READ_AHEAD_BYTES) stream.pause();
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const onError = (error: unknown) => {
    failure = { error };
    wake?.();
  };
  stream.on('data', onData);
  stream.on('end', onEnd);
  stream.on('close', onEnd);
  stream.on('error', onError);
  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk !== undefined) {
        queued -= chunk.length;
        if (stream.isPaused() && queued <= READ_AHEAD_BYTES / 2) stream.resume();
        yield chunk;
        // The consumer has done its work on the chunk: let libuv take what the tool wrote meanwhile.
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      if (failure !== undefined) throw failure.error;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    stream.off('data', onData);
    stream.off('end', onEnd);
    stream.off('close', onEnd);
    stream.off('error', onError);
  }
}

const executables = new Map<string, string | undefined>();

/** Absolute path of the executable `name` on PATH (looked up once), or undefined. */
export function findExecutable(name: string): string | undefined {
  if (executables.has(name)) return executables.get(name);
  let found: string | undefined;
  for (const dir of (process.env.PATH ?? '').split(nodePath.delimiter)) {
    if (dir === '') continue;
    const candidate = nodePath.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) {
        found = candidate;
        break;
      }
    } catch {
      // not here
    }
  }
  executables.set(name, found);
  return found;
}
