/**
 * A dedicated `exec` whose stdin or stdout carries one file's bytes: the
 * streaming path for large files. Unlike the archive endpoints, an exec does
 * not hold the engine's container lock while it streams (an open
 * `GET /archive` blocks `docker kill`, `stop` and new execs until it ends,
 * measured on Docker 20.10), so a reader or writer left open never wedges the
 * container, and it sees tmpfs mounts, which the archive endpoints do not.
 *
 * @module
 */

import type { Duplex } from 'node:stream';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { SilenceError, within } from './deadline.ts';
import { FrameDemuxer, STDERR } from './frame-demuxer.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './helper-session.ts';
import { type ForwardStream, type RemoteFile, readableNext, sequentialFile } from './sequential-file.ts';

/** A running exec with its demultiplexed output. */
export interface ExecStream {
  /** Demultiplexed stdout, with backpressure to the engine connection. */
  readonly stdout: PassThrough;
  /** The raw connection: write stdin here. */
  readonly socket: Duplex;
  /** Resolves when the engine closed the output (the process is gone). */
  readonly ended: Promise<void>;
  /** stderr text collected so far. */
  stderr(): string;
  /** Resolves with the exit code once the output has ended. */
  exitCode(): Promise<number>;
  /** Tears the connection down (the process sees EOF / EPIPE). */
  destroy(): void;
}

/**
 * Starts `cmd` in `container`; `stdin` attaches the connection's write side
 * to the process. An engine that has not started it within `timeoutMs` (a
 * paused or wedged container) fails with a {@link SilenceError}.
 */
export async function startExecStream(container: Docker.Container, cmd: string[], stdin: boolean, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ExecStream> {
  const attach = async () => {
    const created = await container.exec({ Cmd: cmd, AttachStdin: stdin, AttachStdout: true, AttachStderr: true, Tty: false, WorkingDir: '/' });
    return { exec: created, socket: (await created.start({ hijack: true, stdin })) as unknown as Duplex };
  };
  const { exec, socket } = await within(
    attach(),
    timeoutMs,
    () => new SilenceError(`starting '${cmd[0]}' in the container: no answer within ${timeoutMs} ms`),
    (late) => late.socket.destroy(),
  );
  const stdout = new PassThrough({ highWaterMark: 4 << 20 });
  // A reader of stdout sees a transport error through its own listener; a
  // writer only resumes stdout and learns of it from the write and the exit
  // code. Without this listener that error would crash the process (a full
  // disk ends `cat` early, and Podman then fails the write with EPIPE).
  stdout.on('error', () => {});
  const errParts: Buffer[] = [];
  const demux = new FrameDemuxer();
  socket.on('data', (chunk: Buffer) =>
    demux.push(chunk, (stream, part) => {
      if (stream === STDERR) errParts.push(Buffer.from(part));
      else if (!stdout.write(part)) {
        socket.pause();
        stdout.once('drain', () => socket.resume());
      }
    }),
  );
  const ended = new Promise<void>((resolve) => {
    const done = () => {
      stdout.end();
      resolve();
    };
    socket.once('end', done);
    socket.once('close', done);
    socket.once('error', (err: Error) => {
      stdout.destroy(err);
      resolve();
    });
  });
  return {
    stdout,
    socket,
    ended,
    stderr: () => Buffer.concat(errParts).toString('utf8'),
    async exitCode() {
      await ended;
      for (let i = 0; i < 200; i++) {
        const info = await exec.inspect();
        if (!info.Running) return info.ExitCode ?? -1;
        await new Promise((r) => setTimeout(r, 5));
      }
      return -1;
    },
    destroy() {
      socket.destroy();
      stdout.destroy();
    },
  };
}

/**
 * The command of a streamed write of `name` in `dir` (the real path of a
 * directory the helper checked inside the workspace): `cat` from the
 * connection's stdin, in `dir` entered first and found still to be that
 * directory, so that a directory swapped for a link since the check cannot
 * take the bytes outside the workspace (status 3, as the helper's own). When `cat` fails (a full disk), the shell stays a moment before it
 * exits with `cat`'s status. Podman closes the connection as soon as the
 * process is gone, and our next write then fails on EPIPE; Node destroys the
 * socket on that error, and the stderr frame with the tool's message, still
 * unread, went with it (the error had no cause: EIO). While the shell waits,
 * it holds stdin open: writes block instead of failing, and the message is
 * read before the connection ends. A directory that cannot be entered, or is
 * no longer the one checked, waits the same way before its status. A `sleep`
 * without fractions waits 1 s.
 */
export function streamedWriteCommand(dir: string, name: string): string[] {
  return [
    'sh',
    '-c',
    'f() { sleep 0.5 2>/dev/null || sleep 1; exit "$1"; }; cd -P "$1" || f 1; [ "$PWD" = "$1" ] || f 3; cat > "./$2" || f "$?"',
    'ctxfs-write',
    dir,
    name,
  ];
}

/**
 * Opens `absPath` for reading through `dd` in a dedicated exec, starting at
 * `position` (`iflag=skip_bytes`, so any offset is one seek, not a scan).
 */
export async function openExecFile(
  container: Docker.Container,
  absPath: string,
  size: number,
  onError: (err: unknown) => Error,
  timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  identity?: string,
): Promise<RemoteFile> {
  const open = async (position: number): Promise<ForwardStream> => {
    // Every stream reads the file by name: when that is no longer the file the helper checked
    // (`identity`: inode, size, mtime), because it was replaced or a directory on the way was swapped
    // for a link, it fails instead of serving another file or mixing two.
    const cmd =
      identity !== undefined
        ? ['sh', '-c', REOPEN_CHECKED, 'ctxfs-reopen', absPath, identity, String(position)]
        : position === 0
          ? ['cat', absPath]
          : ['dd', `if=${absPath}`, 'bs=1048576', 'iflag=skip_bytes', `skip=${position}`];
    const s = await startExecStream(container, cmd, false, timeoutMs);
    const next = readableNext(s.stdout, timeoutMs);
    return {
      next: async () => {
        const bytes = await next();
        if (bytes === undefined && identity !== undefined && (await s.exitCode()) === REPLACED_STATUS) throw new Error(REPLACED_MESSAGE);
        return bytes;
      },
      start: position,
      close: () => s.destroy(),
    };
  };
  let first: ForwardStream;
  try {
    // Started at open, so the reader keeps the file it opened even if it is replaced.
    first = await open(0);
  } catch (err) {
    throw onError(err);
  }
  return sequentialFile(size, open, onError, first);
}

/** The exit status and message of a reopened read whose file was replaced meanwhile. */
const REPLACED_STATUS = 75;
export const REPLACED_MESSAGE = 'the file changed while it was being read (it was replaced or rewritten since the read began)';

/** `sh -c` script: reads `$1` from byte `$3` when its `stat -L -c %i:%s:%Y` is still `$2`. */
const REOPEN_CHECKED = `x=$(stat -L -c %i:%s:%Y "$1") && [ "$x" = "$2" ] || exit ${REPLACED_STATUS}; exec dd if="$1" bs=1048576 iflag=skip_bytes skip="$3" 2>/dev/null`;
