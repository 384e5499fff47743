/**
 * A ctxfs workspace as a deepagents backend: `BackendProtocolV2` (ls, read,
 * readRaw, write, edit, grep, glob, delete, upload and download) and its
 * sandbox variant (`execute`, through a command runner passed in), with the
 * results, paths and messages deepagents' own `FilesystemBackend` gives in
 * virtual mode, so its tools and its standard tests read them unchanged.
 * Thin over one context-layer session (see {@link WorkspaceFiles}).
 *
 * @module
 */

import { decodeBytes, withoutHostPaths } from '@ctxfs/context';
import { type DecodedText, type FileStat, fsError, isFsError } from '@ctxfs/core';
import type {
  DeleteResult,
  EditResult,
  ExecuteResponse,
  FileDownloadResponse,
  FileInfo,
  FileOperationError,
  FileUploadResponse,
  GlobResult,
  GrepResult,
  LsResult,
  ReadRawResult,
  ReadResult,
  SandboxBackendProtocolV2,
  WriteResult,
} from 'deepagents';
import { type CommandRunner, CommandsUnavailableError, commandsDescription } from '../command-runner.ts';
import { mountedPath, WorkspaceFiles, type WorkspaceFilesOptions } from '../workspace-files.ts';
import { isTextMimeType, mimeTypeOf } from './mime-types.ts';

/** What a backend opened later gets from its opener. */
export interface DeferredWorkspace {
  /** Opens the workspace (start a container, create the context layer); called once, by `initialize()`. */
  readonly open: () => Promise<WorkspaceFilesOptions>;
}

/** Options of {@link CtxfsBackend}: an open workspace, or how to open one on `initialize()`. */
export type CtxfsBackendOptions = CtxfsBackendSettings & (WorkspaceFilesOptions | DeferredWorkspace);

/** Settings of {@link CtxfsBackend} besides its workspace. */
export interface CtxfsBackendSettings {
  /** Runs `execute`; without one it answers exit code 126 with a message saying commands are unavailable. */
  readonly runner?: CommandRunner | undefined;
  /** Most characters of a command's output kept (the rest cut, `truncated: true`). Default 100,000. */
  readonly maxOutputChars?: number | undefined;
  /**
   * Where the workspace appears: `/` (the default) makes `/src/a.ts` the
   * file `src/a.ts` of the workspace. Give the directory where a command
   * runner shows the root (`/workspace` in a container or a bubblewrap
   * sandbox) so files and commands name the same paths; an absolute path
   * outside it is refused.
   */
  readonly mountPath?: string | undefined;
  /** The backend's id; default `ctxfs-` and a random suffix. */
  readonly id?: string | undefined;
}

/** What deepagents' read tool shows for a file with no content. */
export const EMPTY_CONTENT_WARNING = 'System reminder: File exists but has empty contents';

/** An error's message as a model reads it, without host paths (a link's target, a state directory). */
export const messageOf = (err: unknown): string => (isFsError(err) ? withoutHostPaths(err).message : err instanceof Error ? err.message : String(err));

/** deepagents' upload/download error code for a ctxfs error. */
function operationError(err: unknown): FileOperationError {
  if (isFsError(err, 'ENOENT')) return 'file_not_found';
  if (isFsError(err, 'EISDIR')) return 'is_directory';
  if (isFsError(err, 'EACCES') || isFsError(err, 'EPERM') || isFsError(err, 'EROFS') || isFsError(err, 'EDENIED')) return 'permission_denied';
  // deepagents has no code for a limit. The path is valid and the file there: the workspace refuses to serve it whole
  // (ETOOLARGE) or to this session now (ELIMIT), which is a refusal, not a bad path; the message says which limit.
  if (isFsError(err, 'ETOOLARGE') || isFsError(err, 'ELIMIT')) return 'permission_denied';
  return 'invalid_path';
}

/** A failed delete as deepagents' backends word it (VoltAgent's backend refuses a directory without `recursive` too). */
export function deleteError(filePath: string, err: unknown): string {
  if (isFsError(err, 'ENOENT')) return `Error: '${filePath}' not found`;
  if (isFsError(err, 'EISDIR')) return `Error: '${filePath}' is a directory; pass recursive to delete it`;
  return `Error deleting '${filePath}': ${messageOf(err)}`;
}

/**
 * One file's upload result; a failure carries ctxfs's message besides
 * deepagents' code (which limit refused it, and what to do), for which the
 * protocol has no field.
 */
export type CtxfsUploadResponse = FileUploadResponse & { readonly message?: string };

/** One file's download result; a failure carries ctxfs's message besides deepagents' code, as {@link CtxfsUploadResponse}. */
export type CtxfsDownloadResponse = FileDownloadResponse & { readonly message?: string };

const failure = (path: string, err: unknown): CtxfsUploadResponse & { readonly error: FileOperationError; readonly message: string } => ({
  path,
  error: operationError(err),
  message: messageOf(err),
});

/**
 * deepagents' backend over a ctxfs workspace. Paths are virtual: `/` is
 * the workspace root, `/src/a.ts` a file in it; `..` above the root, a
 * symlink leaving it and `~` are refused as values (`{ error }`) naming no
 * host path. Every call is a call of the context session: the policy
 * decides it, the audit records it; `write` and `edit` are versions in the
 * history (undo restores them), and an edit of a file changed since the
 * agent read it is merged with that change or refused with the conflict.
 *
 * @example
 * ```ts
 * const backend = new CtxfsBackend({ context: await createContext({ fs }) });
 * const agent = createDeepAgent({ model, backend });
 * await backend.edit('/src/a.ts', 'retries = 3', 'retries = 5');
 * ```
 */
export class CtxfsBackend implements SandboxBackendProtocolV2 {
  readonly id: string;
  #files: WorkspaceFiles | undefined;
  readonly #open: (() => Promise<WorkspaceFilesOptions>) | undefined;
  readonly #runner: CommandRunner | undefined;
  readonly #maxOutput: number;
  readonly #mount: string;
  #closed = false;

  constructor(options: CtxfsBackendOptions) {
    this.#runner = options.runner;
    this.#maxOutput = options.maxOutputChars ?? 100_000;
    this.#mount = (options.mountPath ?? '/').replace(/\/+$/, '');
    if ('open' in options) this.#open = options.open;
    else this.#files = this.#filesOf(options);
    this.id = options.id ?? `ctxfs-${Math.random().toString(36).slice(2, 10)}`;
  }

  /** Whether the backend is open (the standard tests' lifecycle). */
  get isRunning(): boolean {
    return this.#files !== undefined && !this.#closed;
  }

  /** The workspace as the adapters reach it; `EUNAVAILABLE` before `initialize()` of a backend opened later. */
  get files(): WorkspaceFiles {
    if (this.#files === undefined)
      throw fsError('EUNAVAILABLE', 'read', undefined, { reason: 'the backend is not initialized', hint: 'call initialize() first' });
    return this.#files;
  }

  /** Opens a backend created with `open` (a no-op for one created open). */
  async initialize(): Promise<void> {
    if (this.#files !== undefined || this.#open === undefined) return;
    const opened = await this.#open();
    this.#files = this.#filesOf(opened);
  }

  /**
   * The workspace's files, whose messages name deepagents' own tools as the
   * next step (`read_file`, its offset 0-based, and `delete`): the model
   * calls those, not the session's `readLines`. Their paths are relative to
   * the root, as the messages name files (this backend reads them so): an
   * absolute one would be taken out of the message as a host path.
   */
  #filesOf(options: WorkspaceFilesOptions): WorkspaceFiles {
    const tool = (name: string, args: Record<string, unknown>): string => `${name}(${JSON.stringify(args)})`;
    return new WorkspaceFiles(
      { context: options.context, session: options.session },
      {
        name: 'deepagents',
        calls: {
          read: (path, start, end) =>
            tool('read_file', start === undefined || end === undefined ? { file_path: path } : { file_path: path, offset: start - 1, limit: end - start + 1 }),
          delete: (path) => tool('delete', { file_path: path }),
        },
      },
    );
  }

  /** Closes nothing the caller owns: the context layer and its filesystem stay open. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  /** For the agent's instructions: where files live, what ctxfs keeps, whether commands run. */
  get description(): string {
    return [
      `Files live in a ctxfs workspace: ${this.#mount || '/'} is its root.`,
      'Every write and edit is kept as a version that can be undone; an edit of a file changed since you read it is merged with that change or refused with the conflict.',
      commandsDescription(this.#runner, this.#mount === '' ? undefined : this.#mount),
    ].join(' ');
  }

  /**
   * A path as this backend's methods take it (`/src/a.ts`, or under
   * `mountPath`) as the workspace path it names (`src/a.ts`). One outside
   * the mount stays absolute, and the workspace refuses it
   * (`EPATHESCAPE`); a home-relative one (`~/x`) throws `EPATHESCAPE`.
   * VoltAgent's backend ({@link toVoltAgentBackend}) maps its paths with it.
   */
  workspacePath(path: string): string {
    return this.#local(path);
  }

  /** A backend path as a workspace path; one outside the mount stays absolute, and the workspace refuses it (`EPATHESCAPE`). */
  #local(path: string): string {
    // A home-relative path means the user's home to a shell; here it would quietly name a directory called `~` in the root.
    if (path.startsWith('~'))
      throw fsError('EPATHESCAPE', 'read', path, { reason: 'a path relative to a home directory', hint: 'name files from the workspace root' });
    return mountedPath(path, this.#mount);
  }

  #virtual(path: string): string {
    return path === '' ? this.#mount || '/' : `${this.#mount}/${path}`;
  }

  #info(stat: FileStat, path: string): FileInfo {
    const dir = stat.kind === 'directory';
    return { path: dir ? `${this.#virtual(path)}/` : this.#virtual(path), is_dir: dir, size: dir ? 0 : stat.size, modified_at: stat.mtime.toISOString() };
  }

  async #dirOrUndefined(path: string): Promise<string | undefined> {
    try {
      const local = this.#local(path);
      const stat = await this.files.stat(local);
      return stat.kind === 'directory' ? local : undefined;
    } catch (err) {
      if (isFsError(err, 'ENOENT') || isFsError(err, 'ENOTDIR')) return undefined;
      throw err;
    }
  }

  async ls(path: string): Promise<LsResult> {
    try {
      const dir = await this.#dirOrUndefined(path);
      if (dir === undefined) return { files: [] };
      const entries = await this.files.list(dir);
      const files = entries.filter((e) => e.stat?.kind === 'file' || e.stat?.kind === 'directory').map((e) => this.#info(e.stat as FileStat, e.path));
      // In the order deepagents' FilesystemBackend lists them (and glob below answers): by localeCompare, not by code unit.
      files.sort((a, b) => a.path.localeCompare(b.path));
      return { files };
    } catch (err) {
      return { error: `Error listing '${path}': ${messageOf(err)}` };
    }
  }

  /** A whole file as read would serve it (recorded as this agent's read), or `undefined` when no file is there. */
  async #load(
    filePath: string,
  ): Promise<{ stat: FileStat; bytes: Uint8Array; sha256: string; decoded: DecodedText; binary: boolean; mimeType: string } | undefined> {
    const local = this.#local(filePath);
    const read = await this.files
      .readWithStat(local, (s) => s.kind === 'file')
      .catch((err: unknown) => (isFsError(err, 'ENOENT') ? undefined : Promise.reject(err)));
    if (read?.bytes === undefined) return undefined;
    const { stat, bytes, sha256 } = read;
    // The type deepagents gives the path, as its FilesystemBackend reports it: its tools hand a type that is not text
    // to the model as media. Content that looks binary under a text type is bytes too, of no type it can name.
    const type = mimeTypeOf(local);
    // Through the context's memo: an edit's load of the same bytes under its lock then takes this decoding.
    const decoded = decodeBytes(this.files.fs, local, bytes, sha256);
    const media = !isTextMimeType(type);
    const binary = media || decoded.binary;
    return { stat, bytes, sha256, decoded, binary, mimeType: media || !binary ? type : 'application/octet-stream' };
  }

  /**
   * Lines `offset`.. (0-based) of a text file, at most `limit`, paged as
   * deepagents' own backends page them: offset and limit floored, negative
   * ones as 0 (and not a number as 0); a final newline ends the last line
   * rather than starting another, though a page that reaches the end keeps
   * it; an offset at or past the last line is an error value; a limit of 0
   * is an empty page without paging fields.
   */
  async read(filePath: string, offset = 0, limit = 500): Promise<ReadResult> {
    try {
      const file = await this.#load(filePath);
      if (file === undefined) return { error: `File '${filePath}' not found` };
      const { bytes, decoded, mimeType } = file;
      if (file.binary) return { content: bytes, mimeType };
      if (decoded.text.trim() === '') return { content: EMPTY_CONTENT_WARNING, mimeType };
      const from = Number.isFinite(offset) ? Math.max(0, Math.floor(offset)) : 0;
      const count = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
      const lines = decoded.text.split('\n');
      const totalLines = lines.at(-1) === '' ? lines.length - 1 : lines.length;
      if (from >= totalLines) return { error: `Line offset ${from} exceeds file length (${totalLines} lines)` };
      const page = lines.slice(from, Math.min(from + count, lines.length));
      if (page.length === 0 || count === 0) return { content: page.join('\n'), mimeType };
      const end = Math.min(from + count, totalLines);
      return {
        content: page.join('\n'),
        mimeType,
        totalLines,
        startLine: from + 1,
        endLine: end,
        ...(end < totalLines ? { nextOffset: end } : {}),
      };
    } catch (err) {
      return { error: `Error reading file '${filePath}': ${messageOf(err)}` };
    }
  }

  async readRaw(filePath: string): Promise<ReadRawResult> {
    try {
      const file = await this.#load(filePath);
      if (file === undefined) return { error: `File '${filePath}' not found` };
      const { stat, bytes, decoded, binary, mimeType } = file;
      const times = { created_at: (stat.birthtime ?? stat.ctime ?? stat.mtime).toISOString(), modified_at: stat.mtime.toISOString() };
      return { data: { content: binary ? bytes : decoded.text, mimeType, ...times } };
    } catch (err) {
      return { error: `Error reading file '${filePath}': ${messageOf(err)}` };
    }
  }

  async write(filePath: string, content: string): Promise<WriteResult> {
    try {
      // A media file (a type deepagents does not read as text: an image, a video, a PDF, slides) arrives base64-encoded,
      // as its write tool sends it and its FilesystemBackend decodes it: its bytes are stored as they are.
      if (isTextMimeType(mimeTypeOf(filePath))) await this.files.writeText(this.#local(filePath), content);
      else await this.files.writeBytes(this.#local(filePath), Buffer.from(content, 'base64'));
      return { path: filePath, filesUpdate: null };
    } catch (err) {
      return { error: `Error writing file '${filePath}': ${messageOf(err)}` };
    }
  }

  async edit(filePath: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    try {
      const local = this.#local(filePath);
      const file = await this.#load(filePath);
      if (file === undefined) return { error: `Error: File '${filePath}' not found` };
      const { sha256, decoded } = file;
      if (decoded.binary) return { error: `Error: '${filePath}' is binary; edit replaces text in text files` };
      const text = decoded.text;
      if (text === '' && oldString === '') {
        await this.files.writeText(local, newString);
        return { path: filePath, filesUpdate: null, occurrences: 0 };
      }
      if (oldString === '') return { error: 'Error: oldString cannot be empty when file has content' };
      const occurrences = text.split(oldString).length - 1;
      if (occurrences === 0) return { error: `Error: String not found in file: '${oldString}'` };
      if (occurrences > 1 && !replaceAll) {
        return {
          error: `Error: String '${oldString}' has multiple occurrences (appears ${occurrences} times) in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.`,
        };
      }
      await this.files.replace(local, oldString, newString, replaceAll, sha256);
      return { path: filePath, filesUpdate: null, occurrences };
    } catch (err) {
      return { error: `Error editing file '${filePath}': ${messageOf(err)}` };
    }
  }

  async grep(pattern: string, path: string | null = null, glob: string | null = null, maxCount: number | null = null): Promise<GrepResult> {
    try {
      const base = path === null ? '' : this.#local(path);
      const stat = await this.files.statOrUndefined(base).catch(() => undefined);
      if (stat === undefined) return { matches: [] };
      // A glob without a slash names files at any depth, as ripgrep's --glob does.
      const fileGlob = glob === null || glob === '' ? undefined : glob.includes('/') ? glob : `**/${glob}`;
      const found = await this.files.grep(pattern, {
        path: base,
        glob: stat.kind === 'directory' ? fileGlob : undefined,
        literal: true,
        // One past the cap tells whether anything was cut: exactly maxCount matches is not truncated, as deepagents' applyGrepMaxCount says.
        maxMatches: maxCount === null ? undefined : maxCount + 1,
      });
      const matches = found.map((m) => ({ path: this.#virtual(m.path), line: m.line, text: m.text }));
      return maxCount !== null && matches.length > maxCount ? { matches: matches.slice(0, maxCount), truncated: true } : { matches };
    } catch (err) {
      return { error: `Error searching for '${pattern}': ${messageOf(err)}` };
    }
  }

  /**
   * Files and directories matching `pattern` below `path`, each named
   * relative to `path` (as deepagents' sandbox backends answer), dotfiles
   * included; without size and time (best-effort fields; `ls` gives them).
   */
  async glob(pattern: string, path?: string): Promise<GlobResult> {
    try {
      const dir = path === undefined ? '' : await this.#dirOrUndefined(path);
      if (dir === undefined) return { files: [] };
      const found = await this.files.glob(pattern.replace(/^\/+/, ''), dir, { kind: 'any' });
      const prefix = dir === '' ? 0 : dir.length + 1;
      // The path and whether it is a directory, as the walk knows them: size and time are best-effort in
      // deepagents' FileInfo, and a stat a match would cost more than the search (ls gives them).
      const files: FileInfo[] = found
        .filter((f) => f.kind === 'file' || f.kind === 'directory')
        .map((f) => ({ path: f.path.slice(prefix), is_dir: f.kind === 'directory' }));
      files.sort((a, b) => a.path.localeCompare(b.path));
      return { files };
    } catch (err) {
      return { error: `Error matching '${pattern}': ${messageOf(err)}` };
    }
  }

  async delete(filePath: string): Promise<DeleteResult> {
    try {
      const local = this.#local(filePath);
      const target = this.files.normalize(local, 'delete');
      if (target === '') {
        for (const entry of await this.files.list('')) await this.files.delete(entry.path, { recursive: true });
        return { path: filePath, filesUpdate: null };
      }
      // No stat first: it follows a link, so a dangling one would be "not found", where the delete removes it itself.
      await this.files.delete(local, { recursive: true });
      return { path: filePath, filesUpdate: null };
    } catch (err) {
      return { error: deleteError(filePath, err) };
    }
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<CtxfsUploadResponse[]> {
    const out: CtxfsUploadResponse[] = [];
    for (const [path, content] of files) {
      try {
        await this.files.writeBytes(this.#local(path), content);
        out.push({ path, error: null });
      } catch (err) {
        out.push(failure(path, err));
      }
    }
    return out;
  }

  async downloadFiles(paths: string[]): Promise<CtxfsDownloadResponse[]> {
    const out: CtxfsDownloadResponse[] = [];
    for (const path of paths) {
      try {
        const local = this.#local(path);
        const stat = await this.files.stat(local);
        if (stat.kind === 'directory') {
          out.push({ path, content: null, error: 'is_directory' });
          continue;
        }
        out.push({ path, content: await this.files.readBytes(local), error: null });
      } catch (err) {
        out.push({ ...failure(path, err), content: null });
      }
    }
    return out;
  }

  /**
   * Runs a shell command in the workspace root (seen at the mount path,
   * when one was given) through the runner given,
   * stdout and stderr together as deepagents wants them. Without a runner,
   * or refused before it ran (`EDENIED` by the policy): exit code 126 (the
   * shell's "cannot execute") and a message saying so.
   */
  async execute(command: string): Promise<ExecuteResponse> {
    if (this.#runner === undefined) return { output: new CommandsUnavailableError(command).message, exitCode: 126, truncated: false };
    let stdout: string;
    let stderr: string;
    let exitCode: number;
    try {
      const running = await this.#runner.run(command, this.#mount === '' ? { cwd: '' } : { cwd: '', mountPath: this.#mount });
      [stdout, stderr, exitCode] = await Promise.all([new Response(running.stdout).text(), new Response(running.stderr).text(), running.exitCode]);
    } catch (err) {
      // A command refused before it ran (the policy: EDENIED; a mount path the runner cannot show: EUNSUPPORTED) is
      // answered as deepagents answers errors, a value: the shell's "cannot execute" status and the reason.
      if (isFsError(err)) return { output: err.message, exitCode: 126, truncated: false };
      throw err;
    }
    const output = stderr === '' ? stdout : stdout === '' ? stderr : `${stdout}${stdout.endsWith('\n') ? '' : '\n'}${stderr}`;
    const truncated = output.length > this.#maxOutput;
    return { output: truncated ? output.slice(0, this.#maxOutput) : output, exitCode, truncated };
  }
}
