/**
 * Where a session's paths come in: every path a caller gives is resolved
 * here, once, to the key of the file it names — normalized by core's path
 * module, the links inside the root followed, and a registered file's own
 * Unicode spelling taken — so that every record (reads, versions, locks,
 * audit) of one file has one key, whatever spelling reached it.
 *
 * @module
 */

import { type Filesystem, type FsError, type FsOperation, resolvePath, trailingSlashError } from '@ctxfs/core';
import { linkEntry } from '../edits/link-entries.ts';
import { type PathTarget, rootSpellings } from '../paths/context-path.ts';
import type { FileRegistry } from '../registry/file-registry.ts';
import { normalized } from './call-shapes.ts';

/** Paths as a call gave them, resolved. */
export interface ResolvedPaths {
  readonly paths: string[];
  /** Each spelling that resolved to another path, and where it led (for the audit record). */
  readonly spellings: ReadonlyMap<string, string> | undefined;
  /** Why the paths do not normalize, when they do not: the call refuses with it. */
  readonly invalid: FsError | undefined;
}

/**
 * Resolves the paths a session's calls are given.
 *
 * @example
 * ```ts
 * const boundary = new PathBoundary(fs, registry);
 * (await boundary.resolve('readFile', ['./src/../src/a.ts'])).paths; // ['src/a.ts']
 * await boundary.linkNamed('deleteFile', 'latest'); // 'latest' when it is itself a link
 * ```
 */
export class PathBoundary {
  readonly #fs: Filesystem;
  readonly #registry: FileRegistry;

  constructor(fs: Filesystem, registry: FileRegistry) {
    this.#fs = fs;
    this.#registry = registry;
  }

  /**
   * The caller's paths resolved to the files they name: normalized, every
   * symbolic link inside the root followed (`link/a.ts` is `real/a.ts`), and
   * a registered file's own spelling taken when the caller's is another
   * Unicode normalization. One file has one key whatever the spelling, so a
   * read through one is the base of an edit through another, and both share
   * one history and one lock.
   */
  async resolve(op: string, inputs: readonly string[], target?: PathTarget): Promise<ResolvedPaths> {
    // With the root's absolute spellings, an absolute path inside it is refused naming the relative one.
    const r = normalized(op, inputs, target, rootSpellings(this.#fs));
    if (r.invalid !== undefined) return { ...r, spellings: undefined };
    const spellings = new Map<string, string>();
    const paths: string[] = [];
    for (const [i, p] of r.paths.entries()) {
      const real = await this.#storedSpelling(this.#registry.spelledAs(await this.linkFree(p)));
      if (real !== p) spellings.set(p, real);
      paths.push(real);
      // A call on a directory or a file keeps a name written as a directory's (`a.txt/`) to a directory, as core does.
      if (target === 'any' && real !== '' && resolvePath(inputs[i], op).dirOnly) {
        const wrong = trailingSlashError(op as FsOperation, real, (await this.#fs.stat(real).catch(() => undefined))?.kind, false);
        if (wrong !== undefined) return { paths: inputs.map(String), spellings: undefined, invalid: wrong };
      }
    }
    return { paths, spellings, invalid: undefined };
  }

  /** `path` with the links in it followed; as given on a backend without links, for the root, or where it cannot be resolved (the call meets that failure itself). */
  async linkFree(path: string): Promise<string> {
    if (path === '' || !this.#fs.capabilities.symlinks) return path;
    return await this.#fs.realpath(path).catch(() => path);
  }

  /** The link `path` names itself (its parent's links followed), or undefined when it names no link or does not normalize. */
  async linkNamed(op: string, path: string): Promise<string | undefined> {
    const r = normalized(op, [path]);
    if (r.invalid !== undefined) return undefined;
    return await linkEntry(this.#fs, r.paths[0] as string, (p) => this.linkFree(p));
  }

  /**
   * A non-ASCII path the registry does not know yet (no scan since the file
   * came), as its directory spells it when that is another Unicode
   * normalization of it: `café.md` typed composed names the `cafe\u0301.md`
   * on disk, and a write must not make a second file that looks the same.
   */
  async #storedSpelling(path: string): Promise<string> {
    if (!/[^\p{ASCII}]/u.test(path) || this.#registry.get(path) !== undefined) return path;
    const fs = this.#fs;
    if (await fs.exists(path).catch(() => true)) return path;
    const slash = path.lastIndexOf('/');
    const dir = slash < 0 ? '' : path.slice(0, slash);
    const want = path.slice(slash + 1).normalize('NFC');
    const names = (await fs.list(dir).catch(() => [])).filter((e) => e.name !== path.slice(slash + 1) && e.name.normalize('NFC') === want);
    // One other spelling on disk is the file meant; none, or several, leave the path as given.
    return names.length === 1 ? (names[0] as { path: string }).path : path;
  }
}
