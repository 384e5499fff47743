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
 * rename) and carries a SHA-256 of everything after it (the counts, the rank
 * file's size and modification time, the arrays); it is read only when its
 * owner is the reading user. Anything else (absent, another rank file,
 * truncated, altered, another owner, an unreadable directory) is a miss, and
 * a miss is rebuilt from the rank file. A cache never fails a count: writing
 * it is best effort.
 *
 * Why the digest covers every array, and no part could go unchecked:
 * - the blob and the offsets are what a rank's bytes are; a wrong one is a
 *   wrong token, so a wrong count or a wrong cut.
 * - a damaged index slot cannot give a wrong rank (a hit is a rank whose
 *   bytes were compared equal to the text's), but it can miss a token that
 *   is there: the pre-token is then merged from smaller parts (more tokens
 *   than tiktoken counts), and a lost single byte throws out of the count.
 *   (It cannot hang one: a lookup ends within 32 slots whatever they hold.)
 *   Checking the slots instead means hashing every token again, the build
 *   the cache exists to skip.
 * - the header's counts say where each array starts; read askew, all three
 *   are wrong together, so they are digested with the arrays.
 *
 * The digest is a checksum, not a seal: it is stored beside what it covers,
 * so whoever can write the file can write a matching one. What keeps other
 * users out is the owner check; the digest catches damage (a short write a
 * crash left, a changed block). Any checksum that reads every byte does
 * that, and SHA-256 stays because nothing Node has at hand is cheaper here
 * (3.2 MB, fresh processes): SHA-256 2.1 ms and SHA-1 2.0 ms (both run on
 * the CPU's SHA instructions), MD5 4.8 ms, zlib's crc32 1.0 ms but 1.3 ms
 * more to load `node:zlib`, which a budgeted read otherwise never loads; a
 * checksum written in JavaScript runs cold, about 9 ms for 4.3 MB.
 *
 * What a load costs is mostly reading the file (about 1 ms a megabyte on
 * this project's machines, much of it the kernel faulting in fresh pages)
 * and digesting it (about 0.7 ms a megabyte), so the format is kept small:
 * 3.2 MB, where format 1 was 4.3 MB, by an index of 1 MB where it was 2 MB
 * (see `indexSlots` in bpe-vocabulary.ts). Token lengths stored in place of
 * the offsets (0.6 MB less) were measured and dropped: the prefix sum that
 * rebuilds the offsets runs cold, once a process, and took 4–6 ms where
 * reading and digesting the 0.6 MB takes about 1 ms.
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
// 3: the index halved, in Robin Hood order with tags in its slots; the digest moved to cover the header's counts
// too. (2, the same index in plain linear probing, was only ever written by a working tree: skipped so that no
// such file is read as this one.)
const FORMAT = 3;
// magic 8, format 4, SHA-256 32 of all that follows, ranks 4, blob bytes 4, index slots 4, rank file size 8, its mtime 8.
const HEADER = 72;
const DIGEST_AT = 12;
const DIGESTED_FROM = DIGEST_AT + 32;

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
    for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC.charCodeAt(i)) return undefined;
    if (head.getUint32(8, true) !== FORMAT) return undefined;
    const ranks = head.getUint32(44, true);
    const blobBytes = head.getUint32(48, true);
    const slots = head.getUint32(52, true);
    if (head.getFloat64(56, true) !== sourceSize || head.getFloat64(64, true) !== Math.trunc(sourceMtimeMs)) return undefined;
    if (st.size !== HEADER + (ranks + 1) * 4 + slots * 4 + blobBytes) return undefined;
    const digest = hash('sha256', bytes.subarray(DIGESTED_FROM), 'buffer');
    if (!digest.equals(bytes.subarray(DIGEST_AT, DIGESTED_FROM))) return undefined;
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
  head.setUint32(44, offsets.length - 1, true);
  head.setUint32(48, blob.byteLength, true);
  head.setUint32(52, index.length, true);
  head.setFloat64(56, sourceSize, true);
  head.setFloat64(64, Math.trunc(sourceMtimeMs), true);
  bytes.set(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength), HEADER);
  bytes.set(new Uint8Array(index.buffer, index.byteOffset, index.byteLength), HEADER + offsets.byteLength);
  bytes.set(blob, HEADER + offsets.byteLength + index.byteLength);
  bytes.set(hash('sha256', bytes.subarray(DIGESTED_FROM), 'buffer'), DIGEST_AT);
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
    return;
  }
  // The same rank file's cache in an older format, which this version never reads again.
  for (let older = 1; older < FORMAT; older++) {
    try {
      rmSync(file.replace(/\.v\d+\.bpe$/, `.v${older}.bpe`), { force: true });
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
