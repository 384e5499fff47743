/**
 * The file registry: every file of the workspace with its metadata, kept in
 * the state store and refreshed incrementally. A rescan stats every file but
 * hashes only those whose size or mtime moved; a hash that did not change
 * leaves the version alone, so touching a file is not an edit.
 *
 * @module
 */

import { type FileDigest, type Filesystem, fsError, isFsError } from '@ctxfs/core';
import { contextPath } from '../paths/context-path.ts';
import { PROJECT_CONFIG_DIR } from '../safety/policy.ts';
import { type MultiRowStatement, multiRow, multiRowStatements, ROWS_PER_STATEMENT } from '../state/multi-row.ts';
import type { StateStore } from '../state/state-store.ts';
import {
  compileMatcher,
  DEFAULT_ENTRYPOINTS,
  DEFAULT_SENSITIVE_PATTERNS,
  type FileTag,
  hasGeneratedMarker,
  isSensitivePath,
  languageOf,
  maskOfTags,
  tagMask,
  tagsOfMask,
  tagsText,
} from './classify.ts';
import { compileGitignore, gitignoreNames, isPlainName } from './gitignore.ts';
import { RecordTable } from './record-table.ts';

/** A path no Unicode normalization changes. */
const ASCII = /^[\x20-\x7e]*$/;

/** What the registry knows about one file. */
export interface FileRecord {
  readonly path: string;
  /** Language id from the name (`typescript`, `markdown`...), if known. */
  readonly language: string | undefined;
  readonly tags: readonly FileTag[];
  readonly size: number;
  readonly mtimeMs: number;
  /** Hex SHA-256 of the content: the file's version id. */
  readonly sha256: string;
  /** Number of distinct contents seen so far (1 for a new file). */
  readonly version: number;
  /** When the current version was recorded: first seen by a scan, or written. */
  readonly versionMs: number;
  readonly accessCount: number;
  readonly lastAccessedMs: number | undefined;
  readonly entrypoint: boolean;
  readonly sensitive: boolean;
  readonly generated: boolean;
}

/** Reported while a scan runs (at most every 250 files, and once at the end). */
export interface ScanProgress {
  readonly phase: 'walk' | 'hash' | 'done';
  /** Files found so far. */
  readonly files: number;
  /** Files statted so far. */
  readonly checked: number;
  /** Files hashed so far, and how many need it (known once the walk ended). */
  readonly hashed: number;
  readonly toHash: number | undefined;
  readonly bytesHashed: number;
  readonly elapsedMs: number;
}

/** Outcome of a scan. */
export interface ScanResult {
  readonly files: number;
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  /** Files whose size and mtime were unchanged (not hashed). */
  readonly unchanged: number;
  /** Files read and hashed. */
  readonly hashed: number;
  readonly bytesHashed: number;
  /** Files that could not be read (permissions, FIFOs and devices), with the error code; they are not registered. */
  readonly skipped: ReadonlyArray<{ readonly path: string; readonly code: string }>;
  readonly durationMs: number;
}

/** Options of {@link FileRegistry}. */
export interface FileRegistryOptions {
  /**
   * Glob patterns of directories and files left out of the registry. Default:
   * `.git`, `.hg`, `.svn`, `node_modules`, `__pycache__`, `.venv`, `.ctxfs`.
   */
  ignore?: readonly string[];
  /** Entrypoint paths (workspace-relative). Default {@link DEFAULT_ENTRYPOINTS}. */
  entrypoints?: readonly string[];
  /** Globs of sensitive files, added to {@link DEFAULT_SENSITIVE_PATTERNS}. */
  sensitive?: readonly string[];
  /** Also leave out what the root `.gitignore` lists (subset of git's rules, no negations). Default `true`. */
  gitignore?: boolean;
}

/** Options of {@link FileRegistry.scan}. */
export interface ScanOptions {
  onProgress?: (progress: ScanProgress) => void;
  signal?: AbortSignal;
}

/** How a change was made; versions record it (`external` for edits ctxfs did not make). */
export type VersionAuthor = 'initial' | 'external' | 'user' | `llm:${string}` | `tool:${string}` | (string & {});

/** One version row of a file. */
export interface FileVersionRecord {
  readonly path: string;
  readonly version: number;
  readonly sha256: string;
  readonly size: number;
  readonly author: string;
  readonly message: string | undefined;
  readonly createdMs: number;
}

export const DEFAULT_IGNORE: readonly string[] = ['.git', '.hg', '.svn', 'node_modules', '__pycache__', '.venv', PROJECT_CONFIG_DIR, '.DS_Store'];

// How much work a scan keeps in flight. Results that wait (digests not yet
// recorded, rows not yet committed) outlive V8's young-generation
// collections, and what survives those makes V8 grow the young generation:
// with four slices of 1,024 files ahead, a first scan of 35,000 files peaked
// about 20 MiB higher than with these, at the same speed. Too little ahead
// starves the digest worker while this thread commits: two slices of 256
// took 8% longer than five, for 8 MiB less. Commits are the
// other way round: each rewrites every page its rows touch, and rows arrive
// in no key order, so 1,024 rows a commit wrote 37% more pages than 4,096 and
// took 7% longer, for 8 MiB less peak memory; 2,048 sits between.
/** Changed files sent to `digest` at a time while the walk goes on (one worker request on the host). */
const SCAN_SLICE = 256;
/** Rows stored per transaction during a scan. */
const ROWS_PER_COMMIT = 2048;
/** Slices the walk may send before the oldest of them is hashed. */
const SLICES_AHEAD = 5;

/** Bytes of each file's head checked for a generated-code marker. */
const HEAD_BYTES = 1024;

/** Error codes that mean a file is simply no longer there. */
const GONE: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

const INSERT_FILES = multiRow(
  `INSERT INTO files (path, kind, language, tags, size, mtime_ms, sha256, version, access_count, last_accessed_ms, is_entrypoint, is_sensitive,
     is_generated, scanned_ms, version_ms) VALUES`,
  "(?, 'file', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  `ON CONFLICT (path) DO UPDATE SET language = excluded.language, tags = excluded.tags, size = excluded.size, mtime_ms = excluded.mtime_ms,
     sha256 = excluded.sha256, version = excluded.version, is_entrypoint = excluded.is_entrypoint, is_sensitive = excluded.is_sensitive,
     is_generated = excluded.is_generated, scanned_ms = excluded.scanned_ms, version_ms = excluded.version_ms`,
);

const INSERT_VERSIONS = multiRow(
  'INSERT INTO file_versions (path, version, sha256, size, author, message, created_ms) VALUES',
  '(?, ?, ?, ?, ?, ?, ?)',
  'ON CONFLICT DO NOTHING',
);

/** Access counts: one update of up to 64 files that were each read the same number of times. */
const COUNT_ACCESSES = multiRow('UPDATE files SET access_count = access_count + ?, last_accessed_ms = ? WHERE path IN (', '?', ')');

/** How long an access count may wait before it is written to the store, ms. */
export const ACCESS_FLUSH_MS = 20;

/** The inserts of `versions`' rows. */
function versionInserts(versions: readonly FileVersionRecord[]): MultiRowStatement[] {
  return multiRowStatements(INSERT_VERSIONS, versions, (v) => [v.path, v.version, v.sha256, v.size, v.author, v.message ?? null, v.createdMs]);
}

/**
 * A record about to be stored, with what its version row needs. The version
 * row of a file's first content, when nobody but the scan authored it, is
 * deferred: the `files` row already holds everything it would say, and
 * writing it would nearly double a first scan's writes. It is written when
 * that content stops being current (a new version, or the file's removal),
 * and {@link FileRegistry.versions} reads it from the `files` row until then.
 */
interface PendingRow {
  readonly record: FileRecord;
  /** The record it replaces. */
  readonly previous: FileRecord | undefined;
  readonly isNewContent: boolean;
  readonly author: string;
  readonly message: string | undefined;
}

/** A file's hash, size and generated-marker verdict. */
interface Hashed {
  readonly sha256: string;
  readonly head: string;
  readonly size: number;
}

interface Observed {
  readonly size: number;
  readonly mtimeMs: number;
}

/** Row shape in SQLite. */
interface FileRow {
  path: string;
  language: string | null;
  tags: string;
  size: number;
  mtime_ms: number;
  sha256: string | null;
  version: number;
  access_count: number;
  last_accessed_ms: number | null;
  is_entrypoint: number;
  is_sensitive: number;
  is_generated: number;
  scanned_ms: number;
  /** Null in rows written before migration 4, whose version rows were all written eagerly. */
  version_ms: number | null;
}

/** The version row a record's current content has, or would have if it was deferred. */
function deferredVersionOf(r: FileRecord): FileVersionRecord {
  return { path: r.path, version: r.version, sha256: r.sha256, size: r.size, author: 'initial', message: undefined, createdMs: r.versionMs };
}

function fromRow(r: FileRow): FileRecord {
  return {
    path: r.path,
    language: r.language ?? undefined,
    tags: tagsOfMask(maskOfTags(r.tags === '' ? [] : (r.tags.split(',') as FileTag[]))),
    size: Number(r.size),
    mtimeMs: Number(r.mtime_ms),
    sha256: r.sha256 ?? '',
    version: Number(r.version),
    versionMs: Number(r.version_ms ?? r.scanned_ms),
    accessCount: Number(r.access_count),
    lastAccessedMs: r.last_accessed_ms === null ? undefined : Number(r.last_accessed_ms),
    entrypoint: r.is_entrypoint === 1,
    sensitive: r.is_sensitive === 1,
    generated: r.is_generated === 1,
  };
}

/**
 * The registry of one workspace.
 *
 * @example
 * ```ts
 * const registry = new FileRegistry(fs, store);
 * const result = await registry.scan({ onProgress: (p) => console.log(p.checked, p.hashed) });
 * registry.get('README.md')?.entrypoint; // true
 * ```
 */
export class FileRegistry {
  readonly fs: Filesystem;
  readonly store: StateStore;
  readonly #records = new RecordTable();
  /** Accesses counted here and not yet in the store, by path. */
  readonly #accesses = new Map<string, { count: number; at: number }>();
  #accessTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #baseIgnored: (path: string) => boolean;
  /** Ignore patterns that are plain names: the walk leaves them out natively. */
  readonly #excludeNames: readonly string[];
  #gitignored: (path: string) => boolean = () => false;
  /** Plain-name patterns of the root `.gitignore`, left out by the walk itself. */
  #gitignoreNames: readonly string[] = [];
  /** The `.gitignore` text the two above were compiled from (undefined: none read, or none there). */
  /** The root `.gitignore` as last compiled. */
  #gitignoreBytes: Uint8Array | undefined;
  readonly #useGitignore: boolean;
  readonly #sensitive: (path: string) => boolean;
  readonly #entrypoints: ReadonlySet<string>;
  #loading: Promise<void> | undefined;
  #scanned = false;
  /** Whether the store holds any version row; false only while a scan knows it holds none. */
  #storeHasVersions: boolean | undefined;

  constructor(fs: Filesystem, store: StateStore, options: FileRegistryOptions = {}) {
    this.fs = fs;
    this.store = store;
    const ignore = options.ignore ?? DEFAULT_IGNORE;
    this.#excludeNames = ignore.filter(isPlainName);
    const names = new Set(this.#excludeNames);
    const patterns = compileMatcher(ignore.filter((p) => !names.has(p)));
    this.#baseIgnored = (path) => names.has(path.slice(path.lastIndexOf('/') + 1)) || patterns(path);
    this.#useGitignore = options.gitignore ?? true;
    this.#sensitive = compileMatcher([...DEFAULT_SENSITIVE_PATTERNS, ...(options.sensitive ?? [])]);
    this.#entrypoints = new Set(options.entrypoints ?? DEFAULT_ENTRYPOINTS);
  }

  /**
   * Reads the records the store holds into memory, once; the lookups that
   * answer synchronously (`get`, `list`, `size`, `sensitiveFiles`) answer from
   * them. `createContext` and every asynchronous method load first.
   */
  load(): Promise<void> {
    this.#loading ??= (async () => {
      for (const row of await this.store.all<FileRow>('SELECT * FROM files')) this.#records.set(fromRow(row));
    })();
    return this.#loading;
  }

  /** Whether a full scan ran in this process. */
  get scanned(): boolean {
    return this.#scanned;
  }

  /** Whether the registry leaves `path` out (ignored directory or file). */
  isIgnored(path: string): boolean {
    return this.#ignored(path);
  }

  /**
   * The names the registry leaves out wherever they occur — plain names of
   * its ignore list and of the root `.gitignore`, read again first — so a
   * search can have the backend skip them natively instead of filtering
   * after. {@link isIgnored} answers for the other patterns.
   *
   * @example
   * ```ts
   * await fs.grep('TODO', { exclude: await registry.excludedNames() }); // never enters node_modules
   * ```
   */
  async excludedNames(): Promise<readonly string[]> {
    await this.#loadGitignore();
    return [...new Set([...this.#excludeNames, ...this.#gitignoreNames])];
  }

  /** Whether `path` is sensitive by its name (credentials by convention), registered or not. */
  isSensitive(path: string): boolean {
    return isSensitivePath(path, this.#sensitive);
  }

  #ignored(path: string): boolean {
    return this.#baseIgnored(path) || this.#gitignored(path);
  }

  async #loadGitignore(): Promise<void> {
    if (!this.#useGitignore) return;
    try {
      // Mostly there is none: while the last look found none, asking whether there is one now spares every
      // listing and search a failed read (and the error it builds).
      if (this.#gitignoreBytes === undefined && !(await this.fs.exists('.gitignore'))) {
        this.#gitignored = () => false;
        this.#gitignoreNames = [];
        return;
      }
      const bytes = await this.fs.readBytes('.gitignore');
      // Read every time (it may have changed), decoded and compiled only when it did: every listing asks.
      if (this.#gitignoreBytes !== undefined && Buffer.compare(bytes, this.#gitignoreBytes) === 0) return;
      const text = this.fs.decodeText(bytes, { path: '.gitignore' }).text;
      this.#gitignored = compileGitignore(text);
      this.#gitignoreNames = gitignoreNames(text);
      this.#gitignoreBytes = bytes;
    } catch (err) {
      if (!isFsError(err)) throw err;
      this.#gitignored = () => false;
      this.#gitignoreNames = [];
      this.#gitignoreBytes = undefined;
    }
  }

  /** The record of `path`, as last scanned or refreshed. */
  /**
   * The registered path that `path` names when it is spelled in another
   * Unicode normalization — a name typed composed (`café.txt`, as models
   * write it) for one stored decomposed, as macOS stores names: the one
   * registered path with the same NFC form. `path` itself when it is
   * registered, plain ASCII, or matches none or several.
   *
   * @example
   * ```ts
   * registry.spelledAs('docs/caf\u00e9.md'); // 'docs/cafe\u0301.md' when only that one is registered
   * ```
   */
  spelledAs(path: string): string {
    if (this.#records.has(path) || ASCII.test(path)) return path;
    const key = path.normalize('NFC');
    let match: string | undefined;
    for (const p of this.#records.paths()) {
      if (ASCII.test(p) || p.normalize('NFC') !== key) continue;
      if (match !== undefined) return path;
      match = p;
    }
    return match ?? path;
  }

  get(path: string): FileRecord | undefined {
    return this.#records.get(contextPath(path, 'get'));
  }

  /** All records, sorted by path. */
  list(filter: { tag?: FileTag; under?: string } = {}): FileRecord[] {
    const prefix = filter.under ? `${filter.under.replace(/\/$/, '')}/` : '';
    const out = [...this.#records.select(prefix, filter.tag)];
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Registered sensitive files below `under` (all when omitted), sorted. */
  sensitiveFiles(under?: string): string[] {
    return this.#records.sensitivePaths(under ? `${under.replace(/\/$/, '')}/` : '').sort();
  }

  /** Number of registered files. */
  get size(): number {
    return this.#records.size;
  }

  /**
   * Walks the workspace and brings the registry up to date: new files are
   * added, vanished ones removed, and files whose size or mtime moved are
   * re-hashed — a new hash is a new version authored `external`.
   */
  async scan(options: ScanOptions = {}): Promise<ScanResult> {
    await this.load();
    // A store with no history at all (a first scan) needs no lookup of a new file's last version.
    this.#storeHasVersions = (await this.store.get('SELECT 1 FROM file_versions LIMIT 1')) !== undefined;
    try {
      return await this.#scan(options);
    } finally {
      this.#storeHasVersions = undefined;
    }
  }

  async #scan(options: ScanOptions): Promise<ScanResult> {
    const started = performance.now();
    const { onProgress, signal } = options;
    let files = 0;
    let checked = 0;
    let hashed = 0;
    let bytesHashed = 0;
    let toHash: number | undefined;
    let lastReport = 0;
    const report = (phase: ScanProgress['phase'], force = false) => {
      if (!onProgress) return;
      const count = checked + hashed;
      if (!force && count - lastReport < 250) return;
      lastReport = count;
      onProgress({ phase, files, checked, hashed, toHash, bytesHashed, elapsedMs: performance.now() - started });
    };

    await this.#loadGitignore();
    // One walk with metadata (no stat per file, excluded names never
    // entered), and hashing pipelined behind it: every slice of changed files
    // goes to `digest` as soon as it is known, so the backend hashes (on
    // other cores, where it can) while the walk goes on, and results are
    // stored a few thousand rows a transaction.
    //
    // Only what the scan cannot do without is kept per file: every object
    // that outlives a few milliseconds makes V8 grow its young generation,
    // which was most of a first scan's resident memory.
    //
    // Files registered before the scan, and those of them the walk found:
    // the others were removed.
    const knownBefore = [...this.#records.paths()];
    const seenKnown = new Set<string>();
    // Files found that could not be hashed after all.
    let dropped = 0;
    const added: string[] = [];
    const changed: string[] = [];
    const removed: string[] = [];
    const skipped: Array<{ path: string; code: string }> = [];
    const now = Date.now();
    let unchanged = 0;
    // Each commit rewrites the pages it touched, so tiny transactions would
    // cost more than the rows (see ROWS_PER_COMMIT).
    let pending: PendingRow[] = [];
    const flush = async () => {
      if (pending.length === 0) return;
      // In key order: the B-tree pages each transaction dirties stay few.
      const rows = pending.sort((a, b) => (a.record.path < b.record.path ? -1 : 1));
      pending = [];
      await this.store.transaction(() => this.#write(rows, now));
    };
    /** Records a batch of a slice's digests; `mtimes` holds the slice's mtimes from `at` on, in the same order. */
    const record = async (batch: readonly FileDigest[], mtimes: readonly number[], at: number) => {
      for (let i = 0; i < batch.length; i++) {
        const d = batch[i] as FileDigest;
        if (d.error) {
          seenKnown.delete(d.path);
          dropped++;
          // Gone or replaced by a directory since the walk: simply not there.
          // Unreadable (permissions, a special file): left out, and said so.
          if (!GONE.has(d.error.code)) skipped.push({ path: d.path, code: d.error.code });
          continue;
        }
        const known = this.#records.get(d.path);
        if (!known) added.push(d.path);
        else if (known.sha256 !== d.sha256) changed.push(d.path);
        const mtimeMs = mtimes[at + i] as number;
        const language = languageOf(d.path);
        const marker = this.#markerOf(d.path, d.head, language);
        pending.push(
          await this.#recordOf(d.path, known, { size: d.size, mtimeMs }, d.sha256, marker, known ? 'external' : 'initial', undefined, now, language),
        );
        bytesHashed += d.size;
        hashed++;
      }
      if (pending.length >= ROWS_PER_COMMIT) await flush();
      report('hash');
    };
    const hashing: Array<Promise<void>> = [];
    let slice: string[] = [];
    let sliceMtimes: number[] = [];
    let sent = 0;
    const send = async () => {
      if (slice.length === 0) return;
      const paths = slice;
      const mtimes = sliceMtimes;
      slice = [];
      sliceMtimes = [];
      sent += paths.length;
      const done = (async () => {
        // Digests come back in the order of `paths` (the protocol says so).
        let at = 0;
        for await (const batch of this.fs.digest(paths, { headBytes: HEAD_BYTES })) {
          signal?.throwIfAborted();
          await record(batch, mtimes, at);
          at += batch.length;
        }
      })();
      hashing.push(done);
      // Observed below, once the walk is over; until then a hashing failure (the filesystem closed under the
      // scan) must not count as unhandled, which ends a Node process.
      done.catch(() => {});
      // The walk runs at most a few slices ahead of the hashing, so a scan's
      // pending work is bounded whatever the size of the tree; racing
      // further would hash nothing sooner. Failures surface below, once.
      if (hashing.length > SLICES_AHEAD) await (hashing[hashing.length - 1 - SLICES_AHEAD] as Promise<void>).catch(() => {});
    };
    const exclude = [...this.#excludeNames, ...this.#gitignoreNames];
    const walk = this.fs.walk('', { stat: true, exclude, enter: (e) => !this.#ignored(e.path) });
    let walkError: unknown;
    try {
      for await (const batch of walk) {
        signal?.throwIfAborted();
        for (const entry of batch) {
          if (entry.kind !== 'file' || this.#ignored(entry.path)) continue;
          files++;
          const s = entry.stat;
          if (s === undefined) continue; // vanished between listing and stat
          const mtimeMs = s.mtime.getTime();
          checked++;
          const state = this.#records.compare(entry.path, s.size, mtimeMs);
          if (state !== 'absent') seenKnown.add(entry.path);
          if (state === 'unchanged') unchanged++;
          else {
            slice.push(entry.path);
            sliceMtimes.push(mtimeMs);
          }
        }
        if (slice.length >= SCAN_SLICE) await send();
        report('walk');
      }
      await send();
      toHash = sent;
    } catch (err) {
      walkError = err;
    }
    // Whatever happened to the walk, no hashing is left running unobserved.
    const failed = (await Promise.allSettled(hashing)).find((o) => o.status === 'rejected');
    if (walkError !== undefined) throw walkError;
    if (failed) throw failed.reason;
    signal?.throwIfAborted();

    await this.store.transaction(async () => {
      await flush();
      for (const path of knownBefore) if (!seenKnown.has(path)) removed.push(path);
      await this.#retire(removed);
    });
    this.#scanned = true;
    const result: ScanResult = {
      files: checked - dropped,
      added: added.sort(),
      changed: changed.sort(),
      removed: removed.sort(),
      unchanged,
      hashed,
      bytesHashed,
      skipped: skipped.sort((a, b) => (a.path < b.path ? -1 : 1)),
      durationMs: performance.now() - started,
    };
    onProgress?.({ phase: 'done', files: result.files, checked, hashed, toHash, bytesHashed, elapsedMs: result.durationMs });
    return result;
  }

  /** The highest version the history holds for `path` (0 for none): a file removed, then created again, goes on from it. */
  async #lastVersion(path: string): Promise<number> {
    if (this.#storeHasVersions === false) return 0;
    const row = (await this.store.get('SELECT MAX(version) AS v FROM file_versions WHERE path = ?', [path])) as { v: number | null } | undefined;
    return Number(row?.v ?? 0);
  }

  /** Hashes one file (through the same `digest` a scan uses); throws its error. */
  async #hash(path: string): Promise<Hashed> {
    for await (const [d] of this.fs.digest([path], { headBytes: HEAD_BYTES })) {
      if (d === undefined) break;
      if (d.error) throw d.error;
      return { sha256: d.sha256, head: this.#markerOf(path, d.head), size: d.size };
    }
    throw fsError('EIO', 'digest', path, { reason: 'the backend returned no digest' });
  }

  /**
   * The generated-marker verdict on a file's head, the only part of the
   * head kept: a scan of tens of thousands of files must not hold a
   * kilobyte of each. The markers are ASCII, and ASCII reads alike in every
   * encoding without NUL bytes (UTF-8 and the legacy ones), so a latin1 view
   * is enough and far cheaper than decoding; a head with NULs (UTF-16, or
   * binary) is decoded by the backend as its reads would.
   */
  #markerOf(path: string, head: Uint8Array | undefined, language = languageOf(path)): string {
    if (head === undefined || head.byteLength === 0 || language === undefined) return '';
    const text = head.indexOf(0) < 0 ? Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1') : this.fs.decodeText(head, { path }).text;
    return hasGeneratedMarker(text) ? '@generated' : '';
  }

  /** Writes one file's record; a new hash adds a version row. Returns the record. */
  async #put(
    path: string,
    stat: Observed,
    sha256: string,
    head: string | undefined,
    author: string,
    message: string | undefined,
    now: number,
  ): Promise<FileRecord> {
    const row = await this.#recordOf(path, this.#records.get(path), stat, sha256, head, author, message, now);
    await this.#write([row], now);
    return row.record;
  }

  /** The record `path` gets for this content, and whether that is a new version. */
  async #recordOf(
    path: string,
    known: FileRecord | undefined,
    stat: Observed,
    sha256: string,
    head: string | undefined,
    author: string,
    message: string | undefined,
    now: number,
    language = languageOf(path),
  ): Promise<PendingRow> {
    const tags = head === undefined && known ? known.tags : tagsOfMask(tagMask(path, language, head));
    const isNewContent = !known || known.sha256 !== sha256;
    // A file that was removed and is back goes on from its last version.
    const version = isNewContent ? (known?.version ?? (await this.#lastVersion(path))) + 1 : (known?.version ?? 1);
    const record: FileRecord = {
      path,
      language,
      tags,
      size: stat.size,
      mtimeMs: stat.mtimeMs,
      sha256,
      version,
      versionMs: isNewContent || !known ? now : known.versionMs,
      accessCount: known?.accessCount ?? 0,
      lastAccessedMs: known?.lastAccessedMs,
      entrypoint: this.#entrypoints.has(path),
      sensitive: isSensitivePath(path, this.#sensitive),
      generated: tags.includes('generated'),
    };
    return { record, previous: known, isNewContent, author, message };
  }

  /**
   * Stores records (and a version row for each new content), many rows per
   * statement: a scan writes tens of thousands, and one statement per row
   * would cost more than the hashing.
   */
  /**
   * Stores `rows` and the version rows they add, atomically: in one
   * transaction, or on PostgreSQL, when they fit, in one statement (its
   * `WITH` runs the records' insert too), a round trip where a transaction
   * takes four.
   */
  async #write(rows: readonly PendingRow[], now: number): Promise<void> {
    const versions: FileVersionRecord[] = [];
    for (const { record: r, previous, isNewContent, author, message } of rows) {
      if (!isNewContent) continue;
      // The content this one replaces becomes history: its row may have been deferred.
      if (previous) versions.push(deferredVersionOf(previous));
      if (author !== 'initial' || message !== undefined) {
        versions.push({ path: r.path, version: r.version, sha256: r.sha256, size: r.size, author, message, createdMs: r.versionMs });
      }
    }
    const statements: MultiRowStatement[] = multiRowStatements(INSERT_FILES, rows, ({ record: r }) => [
      ...[r.path, r.language ?? null, tagsText(r.tags), r.size, r.mtimeMs, r.sha256, r.version, r.accessCount],
      ...[r.lastAccessedMs ?? null, r.entrypoint ? 1 : 0, r.sensitive ? 1 : 0, r.generated ? 1 : 0, now, r.versionMs],
    ]);
    statements.push(...versionInserts(versions));
    const [first, second] = statements;
    if (first !== undefined && second !== undefined && statements.length === 2 && this.store.dialect === 'postgres') {
      await this.store.run(`WITH records AS (${first.sql}) ${second.sql}`, [...first.params, ...second.params]);
    } else if (first !== undefined && statements.length === 1) {
      await this.store.run(first.sql, first.params);
    } else {
      await this.store.transaction(async () => {
        for (const st of statements) await this.store.run(st.sql, st.params);
      });
    }
    for (const { record } of rows) this.#records.set(record);
  }

  /** Adds version rows; one already there (same path and version) is kept. */
  async #insertVersions(versions: readonly FileVersionRecord[]): Promise<void> {
    for (const st of versionInserts(versions)) await this.store.run(st.sql, st.params);
  }

  /** Forgets files that are gone, keeping their last version in the history. */
  async #retire(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    await this.store.transaction(async () => {
      await this.#insertVersions(
        paths.flatMap((path) => {
          const known = this.#records.get(path);
          return known ? [deferredVersionOf(known)] : [];
        }),
      );
      for (const path of paths) {
        this.#records.delete(path);
        await this.store.run('DELETE FROM files WHERE path = ?', [path]);
      }
    });
  }

  /**
   * Compares one file with its record (stat first, hash only when size or
   * mtime moved) and updates it. Returns what happened.
   */
  async check(input: string): Promise<{ status: 'unchanged' | 'changed' | 'added' | 'removed'; record: FileRecord | undefined }> {
    const path = contextPath(input, 'check');
    await this.load();
    const known = this.#records.get(path);
    let stat: Observed;
    try {
      const s = await this.fs.stat(path);
      if (s.kind !== 'file') throw fsError('EISDIR', 'check', path);
      stat = { size: s.size, mtimeMs: s.mtime.getTime() };
    } catch (err) {
      if (!isFsError(err, 'ENOENT')) throw err;
      if (!known) return { status: 'removed', record: undefined };
      await this.#forget(path);
      return { status: 'removed', record: undefined };
    }
    if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs && known.sha256 !== '') return { status: 'unchanged', record: known };
    const h = await this.#hash(path);
    const record = await this.#put(path, stat, h.sha256, h.head, known ? 'external' : 'initial', undefined, Date.now());
    return { status: !known ? 'added' : known.sha256 === h.sha256 ? 'unchanged' : 'changed', record };
  }

  /**
   * Records content the caller just read or wrote (its hash already known),
   * without another read. A different hash is a new version by `author`
   * (`external` when ctxfs learns of an edit it did not make).
   */
  async observe(
    path: string,
    observed: { sha256: string; size: number; mtimeMs: number; head?: string },
    author: VersionAuthor = 'external',
    message?: string,
  ): Promise<FileRecord> {
    await this.load();
    const known = this.#records.get(path);
    if (known && known.sha256 === observed.sha256 && known.size === observed.size && known.mtimeMs === observed.mtimeMs) return known;
    return this.#put(path, observed, observed.sha256, observed.head, known ? author : author === 'external' ? 'initial' : author, message, Date.now());
  }

  /**
   * Refreshes the record after a write made through ctxfs, recording the new
   * content as a version by `author`.
   *
   * @example
   * ```ts
   * await fs.write('src/a.ts', code);
   * await registry.refresh('src/a.ts', { author: 'llm:ollama', message: 'fix bug' });
   * ```
   */
  async refresh(input: string, options: { author?: VersionAuthor; message?: string } = {}): Promise<FileRecord | undefined> {
    const path = contextPath(input, 'refresh');
    await this.load();
    let s: Observed;
    try {
      const st = await this.fs.stat(path);
      s = { size: st.size, mtimeMs: st.mtime.getTime() };
    } catch (err) {
      if (!isFsError(err, 'ENOENT')) throw err;
      await this.#forget(path);
      return undefined;
    }
    const h = await this.#hash(path);
    return this.#put(path, s, h.sha256, h.head, options.author ?? 'user', options.message, Date.now());
  }

  #forget(path: string): Promise<void> {
    return this.#retire([path]);
  }

  /**
   * Drops the record of `path` without looking at the disk, keeping its last
   * version in the history. For a name that is now a symbolic link: the
   * registry records files by their own names, and a look through the link
   * would record what it leads to under the link's name (or fail, for a
   * directory or a place outside the root).
   */
  async forget(input: string): Promise<void> {
    const path = contextPath(input, 'forget');
    await this.load();
    if (this.#records.get(path) !== undefined) await this.#forget(path);
  }

  /** Counts one access (reads served to a model); see {@link recordAccesses}. */
  async recordAccess(path: string): Promise<void> {
    await this.recordAccesses([path]);
  }

  /**
   * Counts one access of each of `paths` (a search's files). The count is
   * this registry's at once; the store's is written in batches, within
   * {@link ACCESS_FLUSH_MS} or once 64 files wait, and by
   * {@link flushAccesses} (the context layer's `close` calls it). An access
   * count is a ranking statistic: a write of its own on every read was one
   * store write (a round trip on PostgreSQL) a read for nothing a reader
   * needs at once.
   */
  async recordAccesses(paths: readonly string[]): Promise<void> {
    const now = Date.now();
    for (const path of new Set(paths)) {
      if (!this.#records.touch(path, now)) continue;
      const held = this.#accesses.get(path);
      this.#accesses.set(path, { count: (held?.count ?? 0) + 1, at: now });
    }
    if (this.#accesses.size >= ROWS_PER_STATEMENT) await this.flushAccesses();
    else if (this.#accesses.size > 0 && this.#accessTimer === undefined) {
      // Off any caller's stack: a failure keeps the counts for the next flush.
      this.#accessTimer = setTimeout(() => void this.flushAccesses().catch(() => undefined), ACCESS_FLUSH_MS);
      this.#accessTimer.unref();
    }
  }

  /** Writes the access counts not yet in the store: one statement a distinct count, up to 64 files each. */
  async flushAccesses(): Promise<void> {
    clearTimeout(this.#accessTimer);
    this.#accessTimer = undefined;
    if (this.#accesses.size === 0) return;
    const taken = new Map(this.#accesses);
    this.#accesses.clear();
    const byCount = new Map<number, { paths: string[]; at: number }>();
    for (const [path, { count, at }] of taken) {
      const group = byCount.get(count) ?? { paths: [], at };
      group.paths.push(path);
      group.at = Math.max(group.at, at);
      byCount.set(count, group);
    }
    // What each statement writes, so a failure puts back exactly what was not written.
    const pending = [...byCount].flatMap(([count, { paths, at }]) =>
      multiRowStatements(COUNT_ACCESSES, paths, (path) => [path], { leading: [count, at] }).map((statement) => ({
        statement,
        count,
        at,
        paths: statement.rows,
      })),
    );
    let written = 0;
    try {
      for (const { statement } of pending) {
        await this.store.write(statement.sql, statement.params);
        written++;
      }
    } catch (err) {
      // Nothing is lost or counted twice: what was not written waits for the next flush, added to what came since.
      for (const { count, at, paths } of pending.slice(written)) {
        for (const path of paths) {
          const since = this.#accesses.get(path);
          this.#accesses.set(path, { count: count + (since?.count ?? 0), at: Math.max(at, since?.at ?? 0) });
        }
      }
      throw err;
    }
  }

  /** Version rows of a file, newest first. */
  async versions(input: string, limit = 20): Promise<FileVersionRecord[]> {
    const path = contextPath(input, 'versions');
    const rows = (await this.store.all(
      'SELECT path, version, sha256, size, author, message, created_ms FROM file_versions WHERE path = ? ORDER BY version DESC LIMIT ?',
      [path, limit],
    )) as Array<Record<string, unknown>>;
    const out: FileVersionRecord[] = rows.map((r) => ({
      path: String(r.path),
      version: Number(r.version),
      sha256: String(r.sha256),
      size: Number(r.size),
      author: String(r.author),
      message: r.message === null ? undefined : String(r.message),
      createdMs: Number(r.created_ms),
    }));
    // The current version's row may still be deferred: the store's files row
    // says what it would (read from the store, which another process may
    // have written since this one loaded).
    const current = (await this.store.get('SELECT * FROM files WHERE path = ?', [path])) as FileRow | undefined;
    if (current !== undefined && current.sha256 !== null && Number(current.version) > (out[0]?.version ?? 0)) {
      out.unshift(deferredVersionOf(fromRow(current)));
    }
    return out.slice(0, limit);
  }
}
