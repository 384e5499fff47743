/**
 * What a script read of each file: the base its later write of that file
 * is checked against. just-bash writes whole files (`sed -i` reads a file,
 * then writes all of it back), so a plain write over a file another agent
 * changed since the script read it would drop that change without a word.
 * A write over a file the script read is instead committed with
 * compare-and-swap against what it read; when the file moved on, the
 * script's change and the other one are merged by line, as the session's
 * edits merge them (`auto_merge`), or the write is refused and nothing is
 * written. A file the script never read is written as given, as bash does.
 *
 * @module
 */

import { merge3, sha256Hex } from '@ctxfs/context';
import { type Filesystem, fsError, isFsError } from '@ctxfs/core';
import { BashFsError } from './bash-errors.ts';
import type { ReadForm } from './script-text.ts';

/** Most bytes of read content one set of bases keeps for merges; past it a read is only hashed (a change over it is refused, not merged). */
const MAX_KEPT_BYTES = 8 * 1024 * 1024;
/** Most files one set of bases remembers; the oldest is forgotten first (its later write is then a plain one). */
const MAX_BASES = 4096;
/** Merges tried before a write over a file that keeps changing is refused. */
const MAX_ROUNDS = 3;

/** What the script knows of one file: its hash, its content when kept for a merge, and how it read it as text. */
interface Base {
  readonly sha256: string;
  readonly bytes: Uint8Array | undefined;
  /** Set when the script read the file and it is not plain UTF-8: how it was given it (see script-text.ts). */
  readonly form: ReadForm | undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 text, or `undefined` for bytes that are not (a merge by line needs text). */
function textOf(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The bases of one script (or of one filesystem's calls outside a
 * command), keyed by workspace path.
 *
 * @example
 * ```ts
 * const bases = new ReadBases();
 * bases.remember('a.txt', await fs.readBytes('a.txt'));       // the script read it
 * await bases.write(fs, 'a.txt', edited);                     // merged with a change made since, or refused
 * ```
 */
export class ReadBases {
  readonly #bases = new Map<string, Base>();
  #keptBytes = 0;

  /**
   * Remembers `bytes` as what the script knows of `path`: what it read, or
   * what it wrote itself; with the {@link ReadForm} it was given the file
   * in, when it read it and it is not plain UTF-8.
   */
  remember(path: string, bytes: Uint8Array, form?: ReadForm): void {
    this.#drop(path);
    const keep = this.#keptBytes + bytes.byteLength <= MAX_KEPT_BYTES;
    if (keep) this.#keptBytes += bytes.byteLength;
    this.#bases.set(path, { sha256: sha256Hex(bytes), bytes: keep ? bytes : undefined, form });
    if (this.#bases.size > MAX_BASES) this.#drop(this.#bases.keys().next().value as string);
  }

  /**
   * How the script last read `path` when it is not plain UTF-8, and the
   * bytes it read (when kept); `undefined` when it did not, or wrote the
   * file since: a string written over it goes back in that form.
   */
  readForm(path: string): { readonly form: ReadForm; readonly bytes: Uint8Array | undefined } | undefined {
    const base = this.#bases.get(path);
    return base?.form === undefined ? undefined : { form: base.form, bytes: base.bytes };
  }

  /** Forgets `path` and all below it: the script removed, moved, replaced or appended to it itself. */
  forget(path: string): void {
    for (const key of [...this.#bases.keys()]) if (path === '' || key === path || key.startsWith(`${path}/`)) this.#drop(key);
  }

  #drop(path: string): void {
    this.#keptBytes -= this.#bases.get(path)?.bytes?.byteLength ?? 0;
    this.#bases.delete(path);
  }

  /**
   * Writes `bytes` over `path` (parents created). Over a file the script
   * knows (read, or wrote itself), the write commits only if the file is
   * still what it knows; if it changed since, the script's change is merged
   * with that change and the merge written the same way. Refused (`EIO`,
   * saying why; nothing written) when the changes overlap, the file was
   * removed, or a side is not UTF-8 text or was too large to keep.
   */
  async write(fs: Filesystem, path: string, bytes: Uint8Array): Promise<void> {
    const base = this.#bases.get(path);
    if (base === undefined) await fs.writeBytes(path, bytes, { createParents: true });
    else await this.#writeOver(fs, path, bytes, base);
    this.remember(path, bytes);
  }

  async #writeOver(fs: Filesystem, path: string, bytes: Uint8Array, base: Base): Promise<void> {
    let content = bytes;
    let expected = base.sha256;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      try {
        return await writeIfMatch(fs, path, content, expected);
      } catch (err) {
        if (!isFsError(err, 'ECONFLICT')) throw err;
      }
      // Changed since the script read it: the script's change goes over the file as it is now.
      const now = await fs.readBytes(path).catch((err: unknown) => (isFsError(err, 'ENOENT') ? undefined : Promise.reject(err)));
      if (now === undefined) throw refusal(path, 'it was removed since the script read it');
      const merged = mergeOver(base, bytes, now);
      if (merged === undefined) throw refusal(path, 'it changed since the script read it, and the changes overlap or cannot be merged by line');
      content = merged;
      expected = sha256Hex(now);
    }
    throw refusal(path, 'it kept changing while the script wrote it');
  }
}

/** The script's change (`ours`, made over `base`) merged with the file as it is now, as UTF-8 bytes; `undefined` when they cannot be merged cleanly. */
function mergeOver(base: Base, ours: Uint8Array, now: Uint8Array): Uint8Array | undefined {
  if (base.bytes === undefined) return undefined;
  const [b, o, t] = [textOf(base.bytes), textOf(ours), textOf(now)];
  if (b === undefined || o === undefined || t === undefined) return undefined;
  const merge = merge3(b, o, t);
  return merge.clean ? new TextEncoder().encode(merge.text as string) : undefined;
}

/** Writes `bytes` only if the file's content hashes to `expected` (`ECONFLICT` otherwise): atomically where the backend compares and swaps. */
async function writeIfMatch(fs: Filesystem, path: string, bytes: Uint8Array, expected: string): Promise<void> {
  if (fs.capabilities.compareAndSwap) {
    await fs.writeBytes(path, bytes, { createParents: true, ifMatch: expected });
    return;
  }
  // Without compare-and-swap the check and the write are two steps: a change between them is not seen.
  const now = await fs.readBytes(path).catch(() => undefined);
  if (now === undefined || sha256Hex(now) !== expected) throw fsError('ECONFLICT', 'write', path, { reason: 'the file changed since it was read' });
  await fs.writeBytes(path, bytes, { createParents: true });
}

/** A stale write refused: what bash prints names the script's path and why. */
function refusal(path: string, why: string): BashFsError {
  return new BashFsError('EIO', 'write', `/${path}`, `ECONFLICT: ${why}; nothing was written, read it again and redo the change`);
}
