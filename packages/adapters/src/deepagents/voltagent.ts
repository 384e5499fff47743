/**
 * VoltAgent's workspace `FilesystemBackend` (`@voltagent/core`): the same
 * shape as deepagents' first protocol — `lsInfo`, a line-numbered `read`,
 * `readRaw` as lines, `grepRaw`, `globInfo`, `write`, `edit`, `delete`,
 * `mkdir`, `rmdir`, `stat`, `exists` — answered by a {@link CtxfsBackend},
 * so it goes through the same context session.
 *
 * @module
 */

import type { FileInfo } from 'deepagents';
import { type CtxfsBackend, deleteError, messageOf } from './backend.ts';
import { numberLines } from './line-numbers.ts';

/** A file's content as VoltAgent keeps it: lines. */
export interface VoltAgentFileData {
  content: string[];
  created_at: string;
  modified_at: string;
}

/** A result with an error or the path acted on (VoltAgent's write, edit, delete, mkdir and rmdir results). */
export interface VoltAgentResult {
  error?: string;
  path?: string;
  filesUpdate?: null;
  occurrences?: number;
}

/**
 * VoltAgent's `FilesystemBackend`, declared here (it is a type only) so this
 * module needs no VoltAgent import; the test checks it against VoltAgent's own.
 */
export interface VoltAgentFilesystemBackend {
  lsInfo(path: string): Promise<FileInfo[]>;
  read(filePath: string, offset?: number, limit?: number): Promise<string>;
  readRaw(filePath: string): Promise<VoltAgentFileData>;
  stat(filePath: string): Promise<FileInfo | null>;
  exists(filePath: string): Promise<boolean>;
  grepRaw(pattern: string, path?: string | null, glob?: string | null): Promise<Array<{ path: string; line: number; text: string }> | string>;
  globInfo(pattern: string, path?: string): Promise<FileInfo[]>;
  write(filePath: string, content: string, options?: { overwrite?: boolean }): Promise<VoltAgentResult>;
  edit(filePath: string, oldString: string, newString: string, replaceAll?: boolean): Promise<VoltAgentResult>;
  delete(filePath: string, options?: { recursive?: boolean }): Promise<VoltAgentResult>;
  mkdir(path: string, recursive?: boolean): Promise<VoltAgentResult>;
  rmdir(path: string, recursive?: boolean): Promise<VoltAgentResult>;
}

/**
 * VoltAgent's backend over a ctxfs deepagents backend.
 *
 * @example
 * ```ts
 * import { Workspace } from '@voltagent/core';
 * const backend = toVoltAgentBackend(new CtxfsBackend({ context }));
 * const workspace = new Workspace({ filesystem: { backend } });
 * ```
 */
export function toVoltAgentBackend(backend: CtxfsBackend): VoltAgentFilesystemBackend {
  const files = backend.files;
  // The backend's own mapping, so every method names the file `read` does (under its mount path, when it has one).
  const local = (path: string): string => backend.workspacePath(path);
  /** What is at a path, `undefined` for nothing there or a path the workspace refuses (outside the mount, `~`). */
  const statOf = (path: string) =>
    Promise.resolve()
      .then(() => files.statOrUndefined(local(path)))
      // A link the backend could not follow (in a loop, out of the root) is no file: its size would be the length of the name it holds.
      .then((s) => (s?.kind === 'symlink' ? undefined : s))
      .catch(() => undefined);
  /** A result without deepagents' state update (an external backend has none). */
  const plain = (r: { error?: string | undefined; path?: string | undefined; occurrences?: number | undefined }): VoltAgentResult =>
    r.error !== undefined
      ? { error: r.error }
      : { path: r.path ?? '', filesUpdate: null, ...(r.occurrences === undefined ? {} : { occurrences: r.occurrences }) };
  const fail = (err: unknown): never => {
    throw err instanceof Error ? err : new Error(String(err));
  };
  return {
    lsInfo: async (path) => (await backend.ls(path)).files ?? [],
    read: async (filePath, offset = 0, limit = 2000) => {
      const r = await backend.read(filePath, offset, limit);
      if (r.error !== undefined) return r.error.startsWith('Error') ? r.error : `Error: ${r.error}`;
      if (typeof r.content !== 'string') return `Error: '${filePath}' is binary; read it with readRaw`;
      if (r.totalLines === undefined) return r.content;
      // Numbered from the line the page starts at: the backend floors a fractional offset and takes a negative one as 0.
      return numberLines(r.content.split('\n'), r.startLine ?? 1);
    },
    readRaw: async (filePath) => {
      const r = await backend.readRaw(filePath);
      if (r.data === undefined) return fail(new Error(r.error));
      const content = r.data.content;
      if (typeof content !== 'string') return fail(new Error(`'${filePath}' is binary: VoltAgent keeps files as lines of text`));
      return { content: content.split('\n'), created_at: r.data.created_at, modified_at: r.data.modified_at };
    },
    stat: async (filePath) => {
      const s = await statOf(filePath);
      if (s === undefined) return null;
      const dir = s.kind === 'directory';
      return { path: filePath, is_dir: dir, size: dir ? 0 : s.size, modified_at: s.mtime.toISOString() };
    },
    exists: async (filePath) => (await statOf(filePath)) !== undefined,
    grepRaw: async (pattern, path = null, glob = null) => {
      const r = await backend.grep(pattern, path, glob);
      return r.error ?? r.matches ?? [];
    },
    globInfo: async (pattern, path) => (await backend.glob(pattern, path)).files ?? [],
    write: async (filePath, content, options = {}) => {
      if (options.overwrite === false && (await statOf(filePath)) !== undefined) {
        return { error: `Error: '${filePath}' already exists` };
      }
      return plain(await backend.write(filePath, content));
    },
    edit: async (filePath, oldString, newString, replaceAll) => plain(await backend.edit(filePath, oldString, newString, replaceAll)),
    delete: async (filePath, options = {}) => {
      if (options.recursive === true) return plain(await backend.delete(filePath));
      try {
        // fileOnly refuses a directory (EISDIR) but removes a link itself, one to a directory or dangling too.
        await files.delete(local(filePath), { fileOnly: true });
        return { path: filePath, filesUpdate: null };
      } catch (err) {
        return { error: deleteError(filePath, err) };
      }
    },
    mkdir: async (path, recursive = true) => {
      try {
        // Mapped as read maps it: a path outside the mount path is refused (EPATHESCAPE), not made a directory in the root.
        await files.mkdir(local(path), recursive, recursive);
        return { path };
      } catch (err) {
        return { error: `Error creating '${path}': ${messageOf(err)}` };
      }
    },
    rmdir: async (path, recursive = false) => {
      try {
        const s = await files.stat(local(path));
        if (s.kind !== 'directory') return { error: `Error: '${path}' is not a directory` };
        await files.delete(local(path), { recursive });
        return { path, filesUpdate: null };
      } catch (err) {
        return { error: `Error removing '${path}': ${messageOf(err)}` };
      }
    },
  };
}
