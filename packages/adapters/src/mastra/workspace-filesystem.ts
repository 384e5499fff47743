/**
 * A ctxfs workspace as Mastra's `WorkspaceFilesystem` (`@mastra/core`):
 * every operation, with Mastra's own error classes, thin over one
 * context-layer session (see {@link WorkspaceFiles}). `expectedMtime` is
 * kept as Mastra means it — "the file is still what I read" — but decided by
 * content: a file touched and unchanged is no conflict, a file changed within
 * the same mtime is.
 *
 * @module
 */

import { decodeBytes, withoutHostPaths } from '@ctxfs/context';
import { baseName, type FileStat as CtxfsStat, fsError, type GrepMatch, isFsError, sha256Hex } from '@ctxfs/core';
import type {
  CopyOptions,
  FileContent,
  FileEntry,
  FileStat,
  FilesystemGrepMatch,
  FilesystemGrepOptions,
  FilesystemGrepResult,
  FilesystemInfo,
  ListOptions,
  ProviderStatus,
  ReadOptions,
  RemoveOptions,
  WalkEntry,
  WalkOptions,
  WorkspaceFilesystem,
  WriteOptions,
} from '@mastra/core/workspace';
import {
  DirectoryNotEmptyError,
  DirectoryNotFoundError,
  FileExistsError,
  FileNotFoundError,
  FilesystemError,
  IsDirectoryError,
  NotDirectoryError,
  PermissionError,
  StaleFileError,
  UnsupportedGrepPatternError,
  WORKSPACE_TOOLS,
} from '@mastra/core/workspace';
import { WorkspaceFiles, type WorkspaceFilesOptions } from '../workspace-files.ts';
import { mimeTypeOf } from './mime-types.ts';

/** Options of {@link CtxfsWorkspaceFilesystem}. */
export interface CtxfsWorkspaceFilesystemOptions extends WorkspaceFilesOptions {
  /** Default `ctxfs`. */
  readonly id?: string | undefined;
}

/** What this adapter served of a file: its content hash and the mtime it had then. */
interface Served {
  readonly sha256: string;
  readonly mtimeMs: number;
}

const parentOf = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

/**
 * Mastra's workspace filesystem over a ctxfs workspace. Paths are absolute
 * in the workspace (`/src/a.ts`; relative ones are read from the root); one
 * that leaves the root is a `PermissionError` naming no host path. Every
 * call is a call of the context session: the policy decides it, the audit
 * records it; writes of text are versions in the history (undo restores
 * them) and, without `expectedMtime`, a write of a file changed since the
 * agent read it is merged with that change.
 *
 * @example
 * ```ts
 * import { Workspace } from '@mastra/core/workspace';
 * const filesystem = new CtxfsWorkspaceFilesystem({ context: await createContext({ fs }) });
 * const workspace = new Workspace({ filesystem });
 * ```
 */
export class CtxfsWorkspaceFilesystem implements WorkspaceFilesystem {
  readonly id: string;
  readonly name = 'ctxfs';
  readonly provider = 'ctxfs';
  readonly displayName = 'ctxfs workspace';
  readonly description = 'Files with history, undo, stale-edit detection by content, policy and audit (ctxfs).';
  readonly readOnly: boolean;
  readonly files: WorkspaceFiles;
  status: ProviderStatus = 'ready';
  readonly #served = new Map<string, Served>();

  constructor(options: CtxfsWorkspaceFilesystemOptions) {
    // A message naming the next call names Mastra's workspace tools (their default ids), which the model calls, with
    // the path relative to the root as the messages name files: an absolute one would be taken out as a host path.
    const tool = (name: string, args: Record<string, unknown>): string => `${name}(${JSON.stringify(args)})`;
    this.files = new WorkspaceFiles(
      { context: options.context, session: options.session },
      {
        name: 'mastra',
        calls: {
          read: (path, start, end) =>
            tool(WORKSPACE_TOOLS.FILESYSTEM.READ_FILE, start === undefined || end === undefined ? { path } : { path, offset: start, limit: end - start + 1 }),
          delete: (path) => tool(WORKSPACE_TOOLS.FILESYSTEM.DELETE, { path }),
        },
      },
    );
    this.id = options.id ?? 'ctxfs';
    this.readOnly = this.files.fs.readOnly;
  }

  /** What the agent should know: path rules, and what ctxfs keeps for it. */
  getInstructions(): string {
    return [
      'Paths are absolute within the workspace (/src/a.ts); nothing outside it can be reached.',
      'ctxfs keeps every change to a text file as a version: a change can be undone, and the history of a file shows who changed what.',
      'A write of a file that changed since you read it is merged with that change; pass expectedMtime to be refused instead (decided by content, so a file only touched is not a conflict).',
      "The workspace policy's budgets for this session (operations, bytes, operations a minute) apply to every call; one past them is refused, so read large files in parts.",
      'The workspace policy decides what may be read or changed; every operation is audited.',
    ].join(' ');
  }

  getInfo(): FilesystemInfo {
    return { id: this.id, name: this.name, provider: this.provider, status: this.status, readOnly: this.readOnly };
  }

  isReady(): boolean {
    return this.status === 'ready';
  }

  /** Leaves the context layer and its filesystem open: they are the caller's. */
  destroy(): void {
    this.status = 'destroyed';
  }

  #local(path: string): string {
    return path.replace(/^\/+/, '');
  }

  /** A ctxfs error as Mastra's error class for it (`kind` says which "not found" a caller means). */
  #mastraError(err: unknown, path: string, operation: string, kind: 'file' | 'directory' = 'file'): Error {
    if (!isFsError(err)) return err instanceof Error ? err : new Error(String(err));
    switch (err.code) {
      case 'ENOENT':
        return kind === 'file' ? new FileNotFoundError(path) : new DirectoryNotFoundError(path);
      case 'EISDIR':
        return new IsDirectoryError(path);
      case 'ENOTDIR':
        return new NotDirectoryError(path);
      case 'EEXIST':
        return new FileExistsError(path);
      case 'ENOTEMPTY':
        return new DirectoryNotEmptyError(path);
      case 'EACCES':
      case 'EPERM':
      case 'EROFS':
      case 'EDENIED':
      case 'EPATHESCAPE':
        return new PermissionError(path, operation);
      default:
        // The message reaches the model: a link's target or a state directory named in it would disclose the host.
        return new FilesystemError(withoutHostPaths(err).message, err.code, path);
    }
  }

  async #run<T>(path: string, operation: string, body: () => Promise<T>, kind: 'file' | 'directory' = 'file'): Promise<T> {
    try {
      return await body();
    } catch (err) {
      if (err instanceof FilesystemError) throw err;
      throw this.#mastraError(err, path, operation, kind);
    }
  }

  /**
   * {@link #run} of a call with two paths (copy, move): an error about the
   * destination, or a directory above it, names the destination, since the
   * model must be told which path is wrong ("/a.txt is a directory" of a
   * copy of the file a.txt onto the directory d would send it astray). A
   * file where a directory above the destination must be is
   * `NotDirectoryError`, as the write of a file below a file is.
   */
  async #runFromTo<T>(src: string, dest: string, operation: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (err) {
      if (err instanceof FilesystemError || !isFsError(err)) throw this.#mastraError(err, src, operation);
      const to = this.#normalizedOrUndefined(dest);
      const named = [err.path, err.dest].filter((p): p is string => p !== undefined);
      const above = to !== undefined && named.some((p) => p !== to && (p === '' || to.startsWith(`${p}/`)));
      if (above && (err.code === 'EEXIST' || err.code === 'ENOTDIR')) throw new NotDirectoryError(dest);
      const onDest = to !== undefined && (above || named.includes(to) || (err.dest !== undefined && err.dest === to));
      throw this.#mastraError(err, onDest ? dest : src, operation);
    }
  }

  #normalizedOrUndefined(path: string): string | undefined {
    try {
      return this.files.normalize(this.#local(path), 'copy');
    } catch {
      return undefined;
    }
  }

  async #stat(path: string): Promise<CtxfsStat | undefined> {
    return await this.files.statOrUndefined(this.#local(path));
  }

  readFile(path: string, options?: ReadOptions): Promise<string | Buffer> {
    return this.#run(path, 'read', async () => {
      const local = this.#local(path);
      const { stat, bytes, sha256 } = await this.files.readWithStat(local, (s) => s.kind !== 'directory');
      if (bytes === undefined) throw new IsDirectoryError(path);
      this.#served.set(this.files.normalize(local, 'read'), { sha256, mtimeMs: stat.mtime.getTime() });
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (options?.encoding === undefined) return buffer;
      // Text asked for as UTF-8 (what Mastra's tools ask for) is the file's text, decoded as every ctxfs read decodes
      // it: a Shift_JIS or UTF-16 file would read as U+FFFD and NULs, and a write of that back is refused (the file
      // keeps its encoding, which has no U+FFFD), so the file could be neither read nor edited. UTF-8 reads as before.
      if (/^utf-?8$/i.test(options.encoding)) {
        // Through the context's memo: the edit that follows a read (read, change, write) loads these bytes again.
        const decoded = decodeBytes(this.files.fs, local, bytes, sha256);
        if (!decoded.binary) return decoded.text;
      }
      return buffer.toString(options.encoding);
    });
  }

  writeFile(path: string, content: FileContent, options: WriteOptions = {}): Promise<void> {
    return this.#run(path, 'write', async () => {
      const local = this.#local(path);
      if (options.recursive === false) {
        const parent = parentOf(this.files.normalize(local, 'write'));
        const dir = await this.files.statOrUndefined(parent);
        if (dir === undefined) throw new DirectoryNotFoundError(parentOf(path));
        if (dir.kind !== 'directory') throw new NotDirectoryError(parentOf(path));
      }
      const current = await this.#stat(path);
      if (current?.kind === 'directory') throw new IsDirectoryError(path);
      if (current !== undefined && options.overwrite === false) throw new FileExistsError(path);
      // What the check found is the write's base: the commit is a compare-and-swap against it, so a change landing
      // between the check and the commit is refused too, never merged.
      const base =
        options.expectedMtime !== undefined && current !== undefined ? await this.#assertFresh(path, local, current, options.expectedMtime) : undefined;
      try {
        // A string is text (an edit, merged with a change made since the read); a Buffer is bytes, stored as they are.
        if (typeof content === 'string') await this.files.writeText(local, content, { create: options.overwrite === false, base });
        else await this.files.writeBytes(local, content, { create: options.overwrite === false, base });
      } catch (err) {
        // Changed between the check and the commit: the editor's compare-and-swap caught it.
        if (isFsError(err, 'ECONFLICT') && options.expectedMtime !== undefined) {
          throw new StaleFileError(path, options.expectedMtime, (await this.files.stat(local)).mtime);
        }
        throw err;
      }
    });
  }

  /**
   * `expectedMtime` by content. When it is the mtime the file had when this
   * adapter served it, the file is stale only if its content differs from
   * what was served (a touch is no conflict; a change within the same mtime
   * is). An mtime the adapter never served (the caller's own `stat`) is
   * compared as an mtime. Returns the hash of the content found fresh,
   * the version the write must commit over.
   */
  async #assertFresh(path: string, local: string, current: CtxfsStat, expected: Date): Promise<string> {
    const served = this.#served.get(this.files.normalize(local, 'write'));
    if (served !== undefined && served.mtimeMs === expected.getTime()) {
      const now = sha256Hex(await this.files.fs.readBytes(current.path));
      if (now !== served.sha256) throw new StaleFileError(path, expected, current.mtime);
      return now;
    }
    if (current.mtime.getTime() !== expected.getTime()) throw new StaleFileError(path, expected, current.mtime);
    const now = sha256Hex(await this.files.fs.readBytes(current.path));
    // The content read is the one that mtime stamps only if the file still has it after the read.
    const after = (await this.files.fs.stat(current.path)).mtime;
    if (after.getTime() !== expected.getTime()) throw new StaleFileError(path, expected, after);
    return now;
  }

  appendFile(path: string, content: FileContent): Promise<void> {
    return this.#run(path, 'write', async () => {
      const local = this.#local(path);
      const current = await this.#stat(path);
      if (current?.kind === 'directory') throw new IsDirectoryError(path);
      const before = current === undefined ? new Uint8Array() : await this.files.readBytes(local);
      // Text is added in the file's own encoding (UTF-8 text added to a KOI8-R file would leave it in two encodings).
      const added = typeof content === 'string' ? await this.files.textBytesFor(local, content, before) : content;
      await this.files.writeBytes(local, Buffer.concat([before, added]));
    });
  }

  deleteFile(path: string, options: RemoveOptions = {}): Promise<void> {
    return this.#run(path, 'delete', async () => {
      // No stat first: it follows a link, so a dangling one would be missing and one to a directory a directory,
      // where the delete tells a link apart and removes it itself (as unlink does).
      await this.files.delete(this.#local(path), { fileOnly: true, force: options.force === true });
    });
  }

  copyFile(src: string, dest: string, options: CopyOptions = {}): Promise<void> {
    return this.#runFromTo(src, dest, 'copy', async () => {
      const from = await this.#stat(src);
      if (from === undefined) throw new FileNotFoundError(src);
      if (from.kind === 'directory') {
        if (!options.recursive) throw new IsDirectoryError(src);
        const base = this.files.normalize(this.#local(src), 'copy');
        const below = (entry: { path: string }): string => `${this.#local(dest)}/${entry.path.slice(base === '' ? 0 : base.length + 1)}`;
        // The destination and every directory below the source, empty ones too, as Mastra's LocalFilesystem.copyDirectory makes them.
        await this.files.mkdir(this.#local(dest), true, true);
        for (const entry of await this.files.glob('**', base, { kind: 'directory' })) await this.files.mkdir(below(entry), true, true);
        for (const entry of await this.files.glob('**', base, { kind: 'file' })) {
          const target = below(entry);
          if (options.overwrite === false && (await this.#stat(target)) !== undefined) continue;
          await this.files.writeBytes(target, await this.files.readBytes(entry.path));
        }
        return;
      }
      if (options.overwrite === false && (await this.#stat(dest)) !== undefined) throw new FileExistsError(dest);
      await this.files.writeBytes(this.#local(dest), await this.files.readBytes(this.#local(src)));
    });
  }

  moveFile(src: string, dest: string, options: CopyOptions = {}): Promise<void> {
    return this.#runFromTo(src, dest, 'move', async () => {
      const from = await this.#stat(src);
      if (from === undefined) throw new FileNotFoundError(src);
      const to = await this.#stat(dest).catch(() => undefined);
      if (options.overwrite === false && to !== undefined) throw new FileExistsError(dest);
      // A file renamed onto a directory is refused by the directory (rename(2)'s EISDIR), which the editor reports of the file.
      if (to?.kind === 'directory' && from.kind !== 'directory') throw new IsDirectoryError(dest);
      const parent = parentOf(this.files.normalize(this.#local(dest), 'rename'));
      if (parent !== '') await this.files.mkdir(parent, true, true);
      await this.files.rename(this.#local(src), this.#local(dest), options.overwrite !== false);
    });
  }

  mkdir(path: string, options: { recursive?: boolean } = {}): Promise<void> {
    return this.#run(
      path,
      'mkdir',
      async () => {
        const current = await this.#stat(path);
        if (current !== undefined) {
          if (current.kind !== 'directory') throw new FileExistsError(path);
          return;
        }
        await this.files.mkdir(this.#local(path), options.recursive ?? true, true);
      },
      'directory',
    );
  }

  rmdir(path: string, options: RemoveOptions = {}): Promise<void> {
    return this.#run(
      path,
      'rmdir',
      async () => {
        const current = await this.#stat(path);
        if (current === undefined) {
          if (options.force) return;
          throw new DirectoryNotFoundError(path);
        }
        if (current.kind !== 'directory') throw new NotDirectoryError(path);
        await this.files.delete(this.#local(path), { recursive: options.recursive === true });
      },
      'directory',
    );
  }

  readdir(path: string, options: ListOptions = {}): Promise<FileEntry[]> {
    return this.#run(
      path,
      'readdir',
      async () => {
        const current = await this.#stat(path);
        if (current === undefined) throw new DirectoryNotFoundError(path);
        if (current.kind !== 'directory') throw new NotDirectoryError(path);
        return await this.#entries(this.files.normalize(this.#local(path), 'list'), options, options.maxDepth ?? 100);
      },
      'directory',
    );
  }

  async #entries(dir: string, options: ListOptions, depth: number): Promise<FileEntry[]> {
    const extensions = options.extension === undefined ? undefined : Array.isArray(options.extension) ? options.extension : [options.extension];
    const out: FileEntry[] = [];
    // A link that leads nowhere (dangling, a loop) is listed as a file link, as Mastra's LocalFilesystem lists it.
    for (const entry of await this.files.list(dir, { unresolvedLinks: true })) {
      const type = entry.stat?.kind === 'directory' ? 'directory' : 'file';
      if (extensions !== undefined && type === 'file') {
        const dot = entry.name.lastIndexOf('.');
        const ext = dot <= 0 ? '' : entry.name.slice(dot);
        if (!extensions.some((e) => e === ext || e === ext.slice(1))) continue;
      }
      const link = entry.kind === 'symlink';
      out.push({ name: entry.name, type, ...(link ? { isSymlink: true } : {}), ...(type === 'file' && !link ? { size: entry.stat?.size ?? 0 } : {}) });
      // A link to a directory is listed, not entered (as walk and Mastra's own file collection skip links): a link to
      // a parent would otherwise be entered again at every level, each adding its siblings, 2^depth entries.
      if (options.recursive && type === 'directory' && !link && depth > 0) {
        for (const child of await this.#entries(entry.path, options, depth - 1)) out.push({ ...child, name: `${entry.name}/${child.name}` });
      }
    }
    return out;
  }

  /**
   * Every entry below `path` in one bulk walk of the backend (Mastra's
   * optional capability, which its listing and search tools prefer to a
   * `readdir` a directory).
   */
  walk(path: string, options: WalkOptions = {}): Promise<WalkEntry[]> {
    return this.#run(
      path,
      'walk',
      async () => {
        const current = await this.#stat(path);
        if (current === undefined) throw new DirectoryNotFoundError(path);
        if (current.kind !== 'directory') throw new NotDirectoryError(path);
        const base = this.files.normalize(this.#local(path), 'walk');
        const prefix = base === '' ? 0 : base.length + 1;
        // Without stats: a walk that stats every entry costs far more than one that reads directories; only links are resolved.
        const entries = await this.files.walk(base, { maxDepth: options.maxDepth, hidden: options.includeHidden === true });
        const out: WalkEntry[] = [];
        for (const e of entries) {
          const link = e.kind === 'symlink';
          const kind = link ? (await this.files.fs.stat(e.path).catch(() => undefined))?.kind : e.kind;
          out.push({ path: e.path.slice(prefix), name: e.name, type: kind === 'directory' ? 'directory' : 'file', ...(link ? { isSymlink: true } : {}) });
        }
        return out;
      },
      'directory',
    );
  }

  /**
   * Mastra's optional native search, run by ctxfs's grep (ripgrep on the
   * host; linear-time matching, so no pattern can stall it). A pattern
   * ripgrep's syntax does not take is refused with
   * `UnsupportedGrepPatternError`, on which Mastra searches by itself.
   * Columns are UTF-16 indices, as Mastra asks.
   */
  grep(options: FilesystemGrepOptions): Promise<FilesystemGrepResult[]> {
    return this.#run(options.path, 'grep', async () => {
      const base = this.files.normalize(this.#local(options.path), 'grep');
      const stat = await this.files.stat(base);
      let found: GrepMatch[];
      try {
        found = await this.files.grep(options.pattern, {
          path: base,
          ignoreCase: !options.caseSensitive,
          dot: options.includeHidden,
          // With a cap a file, the total cap counts what is kept after it (below): capping the search first would
          // spend the total on one file's surplus and leave out every later file.
          maxMatches: options.maxCountPerFile === undefined ? (options.maxTotalMatches ?? 100_000) : 100_000,
        });
      } catch (err) {
        if (isFsError(err, 'EBADPATTERN')) throw new UnsupportedGrepPatternError(options.pattern, err.reason);
        throw err;
      }
      const prefix = stat.kind === 'directory' && base !== '' ? base.length + 1 : 0;
      const byFile = new Map<string, FilesystemGrepResult>();
      const context = Math.max(0, options.contextLines ?? 0);
      const linesOf = new Map<string, string[]>();
      let kept = 0;
      for (const m of found) {
        if (options.maxTotalMatches !== undefined && kept >= options.maxTotalMatches) break;
        const rel = stat.kind === 'directory' ? m.path.slice(prefix) : baseName(m.path);
        let file = byFile.get(rel);
        if (file === undefined) {
          file = { path: rel, matches: [] };
          byFile.set(rel, file);
        }
        if (options.maxCountPerFile !== undefined && file.matches.length >= options.maxCountPerFile) continue;
        const column = [...m.text].slice(0, m.matchStart).join('').length;
        const match: FilesystemGrepMatch = { line: m.line, column, text: m.text };
        if (context > 0) {
          let lines = linesOf.get(m.path);
          if (lines === undefined) {
            lines = this.files.fs.decodeText(await this.files.readBytes(m.path), { path: m.path }).text.split(/\r?\n/);
            linesOf.set(m.path, lines);
          }
          match.before = lines.slice(Math.max(0, m.line - 1 - context), m.line - 1);
          match.after = lines.slice(m.line, m.line + context);
        }
        file.matches.push(match);
        kept++;
      }
      return [...byFile.values()];
    });
  }

  /**
   * Whether something is at `path`, as the `access()` of Mastra's
   * `LocalFilesystem` answers: a name no file can have (a NUL, a segment
   * past 255 bytes), a path below a file and a link that cannot be followed
   * (in a loop) have nothing there; a path out of the root, a link out of it
   * too, is the `PermissionError` {@link stat} throws.
   */
  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (err) {
      if (err instanceof FileNotFoundError) return false;
      if (err instanceof FilesystemError && ['EINVAL', 'ENAMETOOLONG', 'ENOTDIR', 'ELOOP'].includes(err.code)) return false;
      throw err;
    }
  }

  stat(path: string): Promise<FileStat> {
    return this.#run(path, 'stat', async () => {
      const s = await this.files.stat(this.#local(path));
      // A link the backend did not follow reports the length of the path it names as its size: not ours to tell.
      // Out of the root it is the PermissionError readFile throws (EPATHESCAPE), in a loop readFile's ELOOP.
      if (s.kind === 'symlink') {
        await this.files.fs.realpath(s.path);
        throw fsError('ELOOP', 'stat', s.path, { reason: 'the symbolic link cannot be followed' });
      }
      const name = s.path.slice(s.path.lastIndexOf('/') + 1);
      const dir = s.kind === 'directory';
      return {
        name,
        path: `/${s.path}`,
        type: dir ? 'directory' : 'file',
        size: dir ? 0 : s.size,
        createdAt: s.birthtime ?? s.ctime ?? s.mtime,
        modifiedAt: s.mtime,
        // Mastra's read_file tool decides by it, as LocalFilesystem gives it: an image is media, a font binary.
        ...(dir ? {} : { mimeType: mimeTypeOf(name) }),
      };
    });
  }
}
