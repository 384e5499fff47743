/**
 * A ctxfs workspace as the AI SDK's sandbox session
 * (`Experimental_SandboxSession`, handed to tools as `experimental_sandbox`),
 * every file member with its documented semantics, thin over one
 * context-layer session (see {@link WorkspaceFiles}).
 *
 * @module
 */

import { type FileKind, isFsError } from '@ctxfs/core';
import type {
  Experimental_SandboxDirectoryEntry as SandboxDirectoryEntry,
  Experimental_SandboxFileStat as SandboxFileStat,
  Experimental_SandboxProcess as SandboxProcess,
  Experimental_SandboxSession as SandboxSession,
} from 'ai';
import { type CommandRunner, CommandsUnavailableError, commandsDescription } from '../command-runner.ts';
import { type FileStream, isUtf8Label, mountedPath, WorkspaceFiles, type WorkspaceFilesOptions } from '../workspace-files.ts';

type SandboxSpawnOptions = Parameters<SandboxSession['run']>[0] & { stdin?: boolean };
type WritableSandboxProcess = SandboxProcess & { readonly stdin: WritableStream<Uint8Array> };

/** Options of {@link createSandboxSession}. */
export interface SandboxSessionOptions extends WorkspaceFilesOptions {
  /**
   * Where the workspace appears to the agent: an absolute path under this
   * prefix names the file below it; any other absolute path is refused.
   * Default `/workspace`.
   */
  readonly mountPath?: string | undefined;
  /** Runs `spawn` and `run`; without one both reject with `EUNSUPPORTED` and the description says so. */
  readonly runner?: CommandRunner | undefined;
}

const kindOf = (kind: FileKind): SandboxFileStat['type'] => (kind === 'file' || kind === 'directory' ? kind : 'other');

/** `null` for a missing path, the member's documented answer; every other error is thrown. */
async function orNull<T>(body: () => Promise<T>): Promise<T | null> {
  try {
    return await body();
  } catch (err) {
    if (isFsError(err, 'ENOENT')) return null;
    throw err;
  }
}

/** A web byte stream over an async iterable, closing the source when the reader stops early. */
function toReadableStream(source: FileStream): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          controller.close();
          await source.close();
        }
        // A chunk is valid only until the next is requested (the protocol's chunk lifetime), and the stream's
        // reader may hold this one past that: it gets its own copy.
        else controller.enqueue(next.value.slice());
      } catch (err) {
        await source.close();
        controller.error(err);
      }
    },
    async cancel() {
      await source.close();
    },
  });
}

async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Opens a workspace as an AI SDK sandbox session.
 *
 * Relative paths resolve against the workspace root, which is also where
 * commands start; an absolute path must lie under `mountPath`. A path that
 * leaves the root (`..` above it, another absolute path, a symlink out of
 * it) is refused with `EPATHESCAPE`, naming no host path. Reads of a missing
 * file resolve to `null`, as the session type says; writes create parents
 * and overwrite, and reject a directory. Every call is one call of the
 * context session: the policy decides it and the audit records it; text
 * writes are versions in the history (undo restores them), checked against
 * what this agent last read and merged when the file moved on since.
 *
 * @example
 * ```ts
 * const context = await createContext({ fs: new MemoryFilesystem() });
 * const sandbox = createSandboxSession({ context });
 * await sandbox.writeTextFile({ path: 'notes/a.md', content: '# A\n' });
 * await sandbox.readTextFile({ path: 'notes/a.md', startLine: 1, endLine: 1 }); // '# A'
 * await generateText({ model, tools, experimental_sandbox: sandbox, prompt });
 * ```
 */
export function createSandboxSession(options: SandboxSessionOptions): SandboxSession {
  // A message naming the next call names the session's own: readTextFile's range is lines, 1-based and inclusive.
  const files = new WorkspaceFiles(
    { context: options.context, session: options.session },
    {
      name: 'ai-sdk',
      calls: {
        read: (path, start, end) => `readTextFile(${JSON.stringify(start === undefined ? { path } : { path, startLine: start, endLine: end })})`,
        delete: (path) => `deleteFile(${JSON.stringify({ path })})`,
      },
    },
  );
  const mount = (options.mountPath ?? '/workspace').replace(/\/+$/, '');
  const runner = options.runner;

  /** A session path as a workspace path. */
  const local = (path: string): string => mountedPath(path, mount);
  const signalled = (signal: AbortSignal | undefined): void => signal?.throwIfAborted();

  const description = [
    `Files live in a ctxfs workspace mounted at ${mount} (relative paths resolve there; paths outside it are refused).`,
    'Every change to a text file is kept as a version: it can be undone, and a write to a file that changed since you read it is merged with that change or refused with the conflict.',
    'The workspace policy decides what may be read or changed, and every operation is audited.',
    commandsDescription(runner, mount),
  ].join(' ');

  async function spawn(spawnOptions: SandboxSpawnOptions): Promise<SandboxProcess | WritableSandboxProcess> {
    if (runner === undefined) throw new CommandsUnavailableError(spawnOptions.command);
    signalled(spawnOptions.abortSignal);
    const cwd = files.normalize(local(spawnOptions.workingDirectory ?? mount), 'list');
    const running = await runner.run(spawnOptions.command, {
      cwd,
      mountPath: mount,
      signal: spawnOptions.abortSignal,
      stdin: spawnOptions.stdin === true,
      env: spawnOptions.env,
    });
    const handle: SandboxProcess = {
      ...(running.pid === undefined ? {} : { pid: running.pid }),
      stdout: running.stdout,
      stderr: running.stderr,
      wait: async () => ({ exitCode: await running.exitCode }),
      kill: () => running.kill(),
    };
    if (spawnOptions.stdin !== true) return handle;
    if (running.stdin === undefined) throw new CommandsUnavailableError(`${spawnOptions.command} (with standard input)`);
    return { ...handle, stdin: running.stdin };
  }

  return {
    description,
    readFile: ({ path, abortSignal }) =>
      orNull(async () => {
        signalled(abortSignal);
        return toReadableStream(await files.readStream(local(path)));
      }),
    readBinaryFile: ({ path, abortSignal }) =>
      orNull(async () => {
        signalled(abortSignal);
        return await files.readBytes(local(path));
      }),
    readTextFile: ({ path, abortSignal, encoding, startLine, endLine }) =>
      orNull(async () => {
        signalled(abortSignal);
        return await files.readLineRange(local(path), startLine, endLine, encoding);
      }),
    writeFile: async ({ path, content, abortSignal }) => {
      signalled(abortSignal);
      await files.writeStream(local(path), chunksOf(content), abortSignal);
    },
    writeBinaryFile: async ({ path, content, abortSignal }) => {
      signalled(abortSignal);
      await files.writeBytes(local(path), content);
    },
    writeTextFile: async ({ path, content, encoding, abortSignal }) => {
      signalled(abortSignal);
      // Text is an edit (merged with a change made since the read); text in another encoding is those bytes, exactly.
      if (isUtf8Label(encoding)) await files.writeText(local(path), content);
      else await files.writeEncodedText(local(path), content, encoding as string);
    },
    stat: ({ path, abortSignal }) =>
      orNull(async () => {
        signalled(abortSignal);
        const s = await files.stat(local(path));
        // A link the backend did not follow (out of the workspace, a loop) has the size of its target's name: not ours to tell.
        return { type: kindOf(s.kind), size: s.kind === 'symlink' ? 0 : s.size };
      }),
    listDirectory: ({ path, abortSignal }) =>
      orNull(async () => {
        signalled(abortSignal);
        // Links are reported as links, not followed (the session type's listing), so one that leads nowhere is listed too.
        const entries = await files.list(local(path), { stat: false });
        return entries.map((e): SandboxDirectoryEntry => ({ name: e.name, type: e.kind }));
      }),
    deleteFile: async ({ path, abortSignal }) => {
      signalled(abortSignal);
      try {
        // A directory is refused; a link, even to one, is removed itself (the session type's deleteFile).
        await files.delete(local(path), { fileOnly: true });
        return true;
      } catch (err) {
        if (isFsError(err, 'ENOENT')) return false;
        throw err;
      }
    },
    spawn: spawn as SandboxSession['spawn'],
    run: async (runOptions) => {
      const process = await spawn({ ...runOptions, stdin: false });
      const [stdout, stderr, { exitCode }] = await Promise.all([new Response(process.stdout).text(), new Response(process.stderr).text(), process.wait()]);
      return { exitCode, stdout, stderr };
    },
  };
}
