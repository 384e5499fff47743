/**
 * The o200k vocabulary kept, once built, in a per-user cache file, so that a
 * process's first token count reads a few megabytes of ready arrays instead
 * of decoding the 3.6 MB rank file and hashing its 200,000 tokens again.
 *
 * Why a cache and not a file built with the package: every CLI command that
 * serves a model's view of a file pays the vocabulary's build (about 50 ms of
 * a 1 KB read's 240 ms start on this project's machines), and a build step
 * beside `tsc -b` would be skipped by every path that only compiles. The
 * cache needs no step: the first process writes it, the next ones read it.
 *
 * Why it can be trusted: the file is written whole (a temporary file, then a
 * rename) and carries a SHA-256 of its arrays and the rank file's size and
 * modification time; it is read only when its owner is the reading user.
 * Anything else (absent, another rank file, truncated, altered, another
 * owner, an unreadable directory) is a miss, and a miss is rebuilt from the
 * rank file. A cache never fails a count: writing it is best effort.
 *
 * @module
 */

import { hash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { endianness, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { BpeVocabulary } from './bpe-vocabulary.ts';

/** `CTXFS_CACHE_DIR`, else `$XDG_CACHE_HOME/ctxfs`, else `~/.cache/ctxfs`. */
export function defaultCacheDir(): string {
  return process.env.CTXFS_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ctxfs');
}

/** Where a vocabulary came from. */
export type VocabularySource = 'cache' | 'rank-file';

/** What {@link loadVocabulary} did. */
export interface LoadedVocabulary {
  readonly vocabulary: BpeVocabulary;
  /** `cache` when the cache file was read; `rank-file` when it was built (and the cache written, if it could be). */
  readonly source: VocabularySource;
  /** The cache file read or written; `undefined` when caching is off. */
  readonly cacheFile: string | undefined;
}

/**
 * The vocabulary in the `.tiktoken` rank file at `rankFile`, read from the
 * cache in `cacheDir` when a valid one is there, else built and cached.
 * `cacheDir: null` turns the cache off.
 *
 * @example
 * ```ts
 * const { vocabulary, source } = loadVocabulary('/path/o200k_base.tiktoken', defaultCacheDir());
 * vocabulary.size; // 200019
 * source; // 'cache' after the first process
 * ```
 */
export function loadVocabulary(rankFile: string, cacheDir: string | null): LoadedVocabulary {
  const stat = statSync(rankFile);
  if (cacheDir === null || endianness() !== 'LE') {
    return { vocabulary: BpeVocabulary.fromTiktoken(readFileSync(rankFile)), source: 'rank-file', cacheFile: undefined };
  }
  // Named by the rank file's identity, so two versions side by side do not overwrite each other.
  const name = `${rankFile.replace(/^.*[/\\]/, '').replace(/\.tiktoken$/, '')}-${stat.size}-${Math.trunc(stat.mtimeMs)}.v${FORMAT}.bpe`;
  const cacheFile = join(cacheDir, name);
  const cached = readCache(cacheFile, stat.size, stat.mtimeMs);
  if (cached !== undefined) return { vocabulary: cached, source: 'cache', cacheFile };
  const vocabulary = BpeVocabulary.fromTiktoken(readFileSync(rankFile));
  writeCache(cacheDir, cacheFile, vocabulary, stat.size, stat.mtimeMs);
  return { vocabulary, source: 'rank-file', cacheFile };
}

const MAGIC = 'ctxfsBPE';
const FORMAT = 1;
// magic 8, format 4, ranks 4, blob bytes 4, index slots 4, rank file size 8, its mtime 8, SHA-256 32.
const HEADER = 72;
const DIGEST_AT = 40;

function readCache(file: string, sourceSize: number, sourceMtimeMs: number): BpeVocabulary | undefined {
  let fd: number;
  try {
    // Non-blocking: a FIFO under the cache file's name must not hold the count until a writer comes.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || (process.getuid !== undefined && st.uid !== process.getuid())) return undefined;
    if (st.size < HEADER) return undefined;
    // One allocation of its own, so the typed arrays below start 4-byte aligned.
    const bytes = new Uint8Array(st.size);
    let at = 0;
    while (at < st.size) {
      const n = readSync(fd, bytes, at, st.size - at, at);
      if (n === 0) return undefined;
      at += n;
    }
    const head = new DataView(bytes.buffer, 0, HEADER);
    if (new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC || head.getUint32(8, true) !== FORMAT) return undefined;
    const ranks = head.getUint32(12, true);
    const blobBytes = head.getUint32(16, true);
    const slots = head.getUint32(20, true);
    if (head.getFloat64(24, true) !== sourceSize || head.getFloat64(32, true) !== Math.trunc(sourceMtimeMs)) return undefined;
    if (st.size !== HEADER + (ranks + 1) * 4 + slots * 4 + blobBytes) return undefined;
    const payload = bytes.subarray(HEADER);
    const digest = hash('sha256', payload, 'buffer');
    if (!digest.equals(bytes.subarray(DIGEST_AT, DIGEST_AT + 32))) return undefined;
    const offsets = new Uint32Array(bytes.buffer, HEADER, ranks + 1);
    const index = new Int32Array(bytes.buffer, HEADER + (ranks + 1) * 4, slots);
    const blob = bytes.subarray(HEADER + (ranks + 1) * 4 + slots * 4);
    return BpeVocabulary.fromArrays({ blob, offsets, index });
  } catch {
    // A file that is not a vocabulary is a miss like any other: the rank file is the truth.
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function writeCache(dir: string, file: string, vocabulary: BpeVocabulary, sourceSize: number, sourceMtimeMs: number): void {
  const { blob, offsets, index } = vocabulary.toArrays();
  const bytes = new Uint8Array(HEADER + offsets.byteLength + index.byteLength + blob.byteLength);
  bytes.set(new TextEncoder().encode(MAGIC), 0);
  const head = new DataView(bytes.buffer, 0, HEADER);
  head.setUint32(8, FORMAT, true);
  head.setUint32(12, offsets.length - 1, true);
  head.setUint32(16, blob.byteLength, true);
  head.setUint32(20, index.length, true);
  head.setFloat64(24, sourceSize, true);
  head.setFloat64(32, Math.trunc(sourceMtimeMs), true);
  bytes.set(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength), HEADER);
  bytes.set(new Uint8Array(index.buffer, index.byteOffset, index.byteLength), HEADER + offsets.byteLength);
  bytes.set(blob, HEADER + offsets.byteLength + index.byteLength);
  bytes.set(hash('sha256', bytes.subarray(HEADER), 'buffer'), DIGEST_AT);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    makeDirectory(dir, 0);
    writeFileSync(temporary, bytes, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
  } catch {
    // Best effort: a read-only home, a full disk or a sandbox costs the next process the build, nothing more.
    try {
      rmSync(temporary, { force: true });
    } catch {}
  }
}

/**
 * `mkdir -p`, bounded. Node's `mkdirSync(dir, { recursive: true })` loops
 * forever where `mkdir` answers ENOENT under a parent that exists (`/proc`
 * does): here each level is tried once.
 */
function makeDirectory(dir: string, depth: number): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir || depth >= 64) throw err;
    makeDirectory(parent, depth + 1);
    mkdirSync(dir, { mode: 0o700 });
  }
}
