/**
 * The audit trail: one JSON line per context-layer call in an append-only,
 * HMAC-chained, size-rotated log, an index of it in the state store for
 * queries, and a verifier that names the first line that was tampered with.
 * See `packages/context/AUDIT.md` for the format and the guarantees.
 *
 * @module
 */

import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, unlinkSync } from 'node:fs';
import { availableParallelism, homedir, loadavg } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { type FsErrorCode, fsError } from '@ctxfs/core';
import { SqliteDatabase } from '../../state/sqlite-database.ts';
import { SqliteStateStore } from '../../state/sqlite-store.ts';
import type { StateStore } from '../../state/state-store.ts';
import { defaultStatePath } from '../../state/store.ts';
import { type AppendedBatch, AppendThread, LINE_FIELDS } from './append-thread.ts';
import { AuditIndex, type AuditQuery, type IndexRow } from './audit-index.ts';
import { type AuditEntry, type AuditRecord, noteReplays, replayKey } from './audit-record.ts';
import { ChainKey, MIN_KEY_BYTES } from './chain-key.ts';
import { isEntryType, parseLine, readLineHead, storedMac } from './chain-line.ts';
import {
  type ChainTip,
  ChainWriter,
  type ChainWriterOptions,
  countLines,
  type FsyncPolicy,
  firstSeqOf,
  listLogFiles,
  readRange,
  repairFields,
  TORN_DETAIL,
} from './chain-writer.ts';
import { writeEntry } from './entry-writer.ts';
import { loadOrCreateKey } from './key-file.ts';
import { LogLock } from './log-lock.ts';
import { verifyParallel } from './parallel-verify.ts';
import { API_REMEDIES, type AuditRemedies } from './remedies.ts';
import { type ChainAnchor, fileName, type VerifyReport, verifyChain } from './verify-chain.ts';

/** Default size at which a log file is completed and the next one begun. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

/** Options of {@link AuditTrail.open}. */
export interface AuditTrailOptions {
  /** The log directory; created 0700. Keep it outside the workspace (see {@link defaultAuditDir}). */
  readonly dir: string;
  /**
   * The chain key: bytes (≥ 16), or a key file created 0600 on first use
   * (see {@link defaultAuditKeyFile}). Must not be inside `dir`: whoever can
   * rewrite the log must not be able to read the key.
   */
  readonly key: Uint8Array | { readonly keyFile: string };
  /** A file is completed once the next line would take it over this size; default 16 MiB. */
  readonly maxFileBytes?: number;
  /** How many files to keep; older ones are deleted at rotation. Default: all. */
  readonly retainFiles?: number;
  /** When lines reach the disk: `'always'` (each append), `'rotate'` (default: at rotation and close), `'never'`. */
  readonly fsync?: FsyncPolicy;
  /**
   * Where the query index lives: a SQLite state store (its own file) or a
   * SQLite database. Without one, or with a PostgreSQL store, `query` reads the log.
   */
  readonly index?: StateStore | SqliteDatabase | undefined;
  /**
   * How this trail's errors and warnings name checking the log and rebuilding
   * its index: the API's calls by default ({@link API_REMEDIES}); a command
   * line passes its own commands, with the options that reach this trail.
   */
  readonly remedies?: AuditRemedies | undefined;
}

/** How the trail's writers write: what its append thread is started with, besides the key and the log. */
type WriterSettings = Pick<ChainWriterOptions, 'maxFileBytes' | 'retainFiles' | 'fsync'>;

/** What {@link AuditTrail.open} recorded when the end of the log was not as the trail left it. */
export interface AuditRepair {
  /** A torn last line (a write cut by a crash) that was removed: its file, size and SHA-256. */
  readonly cut: { readonly file: string; readonly bytes: number; readonly sha256: string } | null;
  /** Records the index knew that the log no longer holds (`verify()` reports them as `truncated`). */
  readonly lost: Readonly<Record<string, unknown>> | null;
  readonly detail: string;
}

/**
 * Where a workspace's audit log goes by default: beside the workspace, next to its state store.
 *
 * @example
 * ```ts
 * defaultAuditDir('/home/me/project'); // '/home/me/.project.ctxfs/audit'
 * ```
 */
export function defaultAuditDir(workspaceRoot: string): string {
  if (!isAbsolute(workspaceRoot))
    throw fsError('EINVAL', 'audit', undefined, { reason: 'the workspace root must be an absolute path', hint: 'pass dir explicitly' });
  return join(dirname(defaultStatePath(workspaceRoot)), 'audit');
}

/**
 * Where the chain key goes by default: the user's state directory, outside every workspace.
 *
 * @example
 * ```ts
 * defaultAuditKeyFile(); // '/home/me/.local/state/ctxfs/audit.key' (or under $XDG_STATE_HOME)
 * ```
 */
export function defaultAuditKeyFile(): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'ctxfs', 'audit.key');
}

function inside(parent: string, child: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * A tamper-evident audit trail.
 *
 * @example
 * ```ts
 * const trail = AuditTrail.open({ dir: defaultAuditDir(root), key: { keyFile: defaultAuditKeyFile() }, index: ctx.store });
 * trail.append({ op: 'readFile', opClass: 'read', paths: ['src/a.ts'], sessionId, agent: 'llm:claude',
 *   backend: 'host', user: 'dev', params: { maxTokens: 800 }, result: 'ok', tokens: 342, durationMs: 3 });
 * trail.query({ path: 'src/a.ts', since: new Date(Date.now() - 86_400_000) });
 * trail.verify(); // { ok: true, records, files, … } or { ok: false, firstBad: { file, line, seq, damage, detail } }
 * trail.close();
 * ```
 */
export class AuditTrail {
  readonly dir: string;
  /** How this trail's messages name its remedies (see {@link AuditTrailOptions.remedies}). */
  readonly remedies: AuditRemedies;
  readonly #key: ChainKey;
  readonly #keyBytes: Uint8Array;
  readonly #writer: ChainWriter;
  readonly #index: AuditIndex | undefined;
  readonly #settings: WriterSettings;
  /** The thread that appends the batches handed to {@link AuditTrail.appendLater}, once started. */
  #thread: AppendThread | undefined;
  /** Calls of appendLater so far, while no thread was started: the first is appended here. */
  #laterCalls = 0;
  /** No thread is (ever again) to be started: one failed to open. */
  #threadOff = false;
  /** The thread appended lines this writer has not caught up with yet. */
  #threadWrote = false;
  /** Why a batch handed to the thread was not appended, for the next appendLater or close to throw. */
  #threadError: Error | undefined;
  /** Index rows of the lines appended in the batch under way. */
  #batchRows: IndexRow[] | undefined;
  #closed = false;
  #repaired: AuditRepair | undefined;
  /** Records other processes replayed into the log (see {@link AuditTrail.appendCommitted}), by {@link replayKey}. */
  readonly #replayedElsewhere = new Set<string>();

  private constructor(
    dir: string,
    keyBytes: Uint8Array,
    key: ChainKey,
    writer: ChainWriter,
    index: AuditIndex | undefined,
    remedies: AuditRemedies,
    settings: WriterSettings,
  ) {
    this.dir = dir;
    this.#settings = settings;
    this.remedies = remedies;
    this.#keyBytes = keyBytes;
    this.#key = key;
    this.#writer = writer;
    this.#index = index;
  }

  /**
   * Opens (creating) the log in `options.dir` and continues its chain. A torn
   * last line — a write cut by a crash — is cut off and the cut recorded in a
   * `repair` line; records the index knew but the log lost are recorded the
   * same way, and `verify()` reports them as `truncated`.
   */
  static open(options: AuditTrailOptions): AuditTrail {
    const dir = resolve(options.dir);
    let keyBytes: Uint8Array;
    if (options.key instanceof Uint8Array) keyBytes = options.key;
    else {
      if (inside(dir, options.key.keyFile)) {
        throw fsError('EINVAL', 'audit', undefined, {
          reason: `the audit key ${options.key.keyFile} is inside the log directory`,
          hint: 'keep the key in the user state directory (defaultAuditKeyFile()), out of reach of whoever can write the log',
        });
      }
      keyBytes = loadOrCreateKey(resolve(options.key.keyFile));
    }
    if (keyBytes.byteLength < MIN_KEY_BYTES) {
      throw fsError('EINVAL', 'audit', undefined, {
        reason: `the audit key must be at least ${MIN_KEY_BYTES} bytes`,
        hint: 'pass 32 random bytes or a keyFile',
      });
    }
    const key = new ChainKey(keyBytes);
    const database = indexDatabase(options.index);
    const index = database === undefined ? undefined : new AuditIndex(database);
    const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    const retainFiles = options.retainFiles ?? Number.POSITIVE_INFINITY;
    if (!(maxFileBytes > 0) || !(retainFiles >= 1)) {
      throw fsError('EINVAL', 'audit', undefined, { reason: 'maxFileBytes must be positive and retainFiles at least 1' });
    }
    let trail: AuditTrail | undefined;
    const remedies = options.remedies ?? API_REMEDIES;
    const settings: WriterSettings = { maxFileBytes, retainFiles, fsync: options.fsync ?? 'rotate' };
    ChainWriter.open(
      {
        dir,
        key,
        remedies,
        ...settings,
        previousChain: () => {
          const chain = index?.chain;
          const newest = index?.newest();
          return chain === undefined || newest === undefined ? undefined : { chain, ...newest };
        },
        onPrune: (oldestSeq) => index?.dropBefore(oldestSeq),
        knownLine: () => index?.lineAtOrBefore(Number.MAX_SAFE_INTEGER),
        onForeignLines: (lines) => {
          if (trail !== undefined) noteReplays(lines, trail.#replayedElsewhere);
        },
      },
      // Before any other process appends: the index and the log are compared at one moment.
      (writer) => {
        trail = new AuditTrail(dir, keyBytes, key, writer, index, remedies, settings);
        trail.#reconcile();
      },
    );
    return trail as AuditTrail;
  }

  /**
   * Deletes the log (every `audit-*.jsonl` in `dir`) and clears the index, so
   * the next `open` starts a new chain that verifies. The key is kept. Refused
   * (`EBUSY`) while a trail in any process has the log open.
   *
   * @example
   * ```ts
   * trail.close();
   * AuditTrail.reset({ dir, index: store });
   * ```
   */
  static reset(options: { readonly dir: string; readonly index?: StateStore | SqliteDatabase | undefined }): void {
    const dir = resolve(options.dir);
    const clearIndex = () => {
      const database = indexDatabase(options.index);
      if (database !== undefined) new AuditIndex(database).clear();
    };
    if (!existsSync(dir)) {
      clearIndex();
      return;
    }
    LogLock.exclusive(dir, () => {
      for (const n of listLogFiles(dir)) unlinkSync(join(dir, fileName(n)));
      clearIndex();
    });
  }

  /** Brings the index and the log into agreement after open; records in the log what did not agree. */
  #reconcile(): void {
    const w = this.#writer;
    const ix = this.#index;
    let lost: Record<string, unknown> | null = null;
    let rebuild = false;
    if (ix !== undefined) {
      const chain = ix.chain;
      const newest = ix.newest();
      if (w.fresh) {
        // The start header already names what the index knew. The new log holds no entry yet, so the index holds
        // all it has: without the mark, the next open would read the whole log to look for missing ones.
        ix.clear();
        ix.chain = w.tip.chain;
        ix.complete = w.tip.seq;
      } else if (chain === undefined) {
        rebuild = true;
      } else if (chain !== w.tip.chain) {
        lost = { chain, toSeq: newest?.seq ?? null, mac: newest?.mac ?? null };
        rebuild = true;
      } else if (newest !== undefined && newest.seq > w.tip.seq) {
        lost = { chain, fromSeq: w.tip.seq + 1, toSeq: newest.seq, mac: newest.mac };
        ix.dropAfter(w.tip.seq);
      }
    }
    if (lost !== null || w.torn !== undefined) {
      const detail = lost !== null ? 'the index knew records the log no longer holds' : TORN_DETAIL;
      const fields = repairFields(w.tip.chain, fileName(w.fileNo), w.torn, lost, detail);
      w.append('repair', () => fields);
      this.#repaired = { cut: fields.cut as AuditRepair['cut'], lost, detail };
    }
    if (ix !== undefined) {
      // Retention may have deleted files after the rows were written but before they were dropped (a crash between).
      const first = listLogFiles(this.dir)[0];
      if (first !== undefined) ix.dropBefore(firstSeqOf(join(this.dir, fileName(first))));
      if (rebuild) this.rebuildIndex();
      // Every entry the index lacks since the last open that indexed the whole
      // log (ix.complete): a process that died with rows still queued for the
      // index leaves a gap below any number of rows others wrote since, so no
      // window behind the newest row is wide enough (one of 64 missed such
      // gaps in the audit-processes test about one run in three). Below that
      // mark nothing is missing, so an open reads only what was appended since
      // the previous one, not the whole kept log (its cost grew with the log).
      else if (!w.fresh) {
        this.#indexLog(ix.complete, true);
        ix.complete = w.tip.seq;
      }
    }
  }

  /** What open found wrong at the end of the log and recorded in a `repair` line, if anything. */
  get repaired(): AuditRepair | undefined {
    return this.#repaired;
  }

  /** The chain's current end: its id, the last seq and its MAC (after the lines handed to {@link AuditTrail.appendLater}). */
  get tip(): ChainTip {
    if (!this.#closed) this.#settle();
    // The thread's lines are another writer's to this one: it catches up with them as with another process's.
    if (this.#threadWrote && !this.#closed) this.#writer.locked(() => undefined);
    this.#threadWrote = false;
    return this.#writer.tip;
  }

  /** The id of the chain this trail appends to (as of its last look at the log). */
  get chain(): string {
    return this.#writer.tip.chain;
  }

  /**
   * Appends one entry (parameters elided, see `elideParams`) and returns it
   * as written. Synchronous: when it returns the line is in the log file
   * (in a {@link AuditTrail.batch}, when the batch returns). Other processes may append to the same log; each line takes the log's
   * lock for its write (see {@link AuditTrail.batch} for many).
   */
  append(entry: AuditEntry): AuditRecord {
    this.#open();
    const { line: w, prev, fields } = writeEntry(this.#writer, entry);
    const row = indexRow(w.seq, Date.parse(w.ts), w.fileNo, w.line, w.offset, w.length, w.mac, entry);
    // In a batch the line reaches the file when the batch ends: indexed then, and only if it did.
    if (this.#batchRows !== undefined) this.#batchRows.push(row);
    else this.#index?.add(row);
    return {
      seq: w.seq,
      prev,
      ts: w.ts,
      type: 'entry',
      ...(fields as Omit<AuditRecord, 'seq' | 'prev' | 'ts' | 'type' | 'mac' | 'location' | 'verified'>),
      mac: w.mac,
      location: { file: fileName(w.fileNo), line: w.line },
      verified: true,
    };
  }

  /**
   * Appends an entry whose record another process may have replayed into the
   * log already: the record was committed to the state store's table, and a
   * process that opened between that commit and this append found the
   * table's row missing from the log and appended it, marked `replayed`.
   * Then this append would repeat it; it is skipped, and `undefined`
   * returned. A replayed record is known by its request id, operation and
   * duration together (a request retried with its id takes a duration of its
   * own).
   */
  appendCommitted(entry: AuditEntry): AuditRecord | undefined {
    this.#open();
    return this.#writer.locked(() => {
      // Under the lock, the writer has caught up with every line appended before this one.
      if (this.#replayedElsewhere.delete(replayKey(entry.requestId, entry.op, entry.durationMs))) return undefined;
      return this.append(entry);
    });
  }

  /**
   * Appends entries whose records were committed to the state store's table
   * (each as {@link AuditTrail.appendCommitted} does), off the calling
   * thread once the trail has been handed a few batches: a worker thread
   * writes their lines while the caller goes on. The chain holds them in the
   * order they were handed over: whatever this trail does next to the log
   * (an append, a batch, a query, `tip`, `close`) waits for them first, and
   * so does the next `appendLater` (one batch in flight at most). A batch
   * the thread could not append (a full disk, a log held past the lock's
   * wait) is thrown by the next `appendLater` or by `close`; its records
   * are in the table, from which the next open replays them. A process
   * killed meanwhile leaves them to that replay too, as one killed between
   * its commit and its append does.
   */
  appendLater(entries: readonly AuditEntry[]): void {
    this.#open();
    const failed = this.#threadError;
    this.#threadError = undefined;
    if (entries.length > 0) {
      const thread = this.#thread ?? this.#startThread();
      // Inside a hold of the lock the thread could not take it: appended here, as while the thread starts.
      if (thread?.status === 'open' && !this.#writer.holding) thread.post(entries);
      else this.#appendHere(entries);
    }
    if (failed !== undefined) throw failed;
  }

  /** Whether {@link AuditTrail.appendLater} hands batches to the append thread now (it starts on the second, and opens a moment later). */
  get threaded(): boolean {
    return this.#thread?.status === 'open';
  }

  /** The first batch is appended here: a command that records a call or two never starts a thread. */
  #startThread(): AppendThread | undefined {
    if (this.#threadOff || ++this.#laterCalls < 2) return undefined;
    this.#thread = AppendThread.start({
      dir: this.dir,
      key: this.#keyBytes,
      ...this.#settings,
      remedies: this.remedies,
      view: this.#writer.view,
      replayed: [...this.#replayedElsewhere],
    });
    return this.#thread;
  }

  #appendHere(entries: readonly AuditEntry[]): void {
    this.batch(() => {
      for (const e of entries) this.appendCommitted(e);
    });
  }

  /**
   * Runs `body` holding the log's lock once for all the appends it makes:
   * cheaper than a lock a line, the lines stay together in the chain, and
   * they reach the file in one write when `body` returns (or throws: lines
   * appended before the throw are written too). Should that write fail,
   * none of the batch's lines is indexed, and the next append takes its
   * view of the log from the file again.
   *
   * @example
   * ```ts
   * trail.batch(() => { for (const e of entries) trail.append(e); });
   * ```
   */
  batch<T>(body: () => T): T {
    this.#open();
    if (this.#batchRows !== undefined) return body();
    const rows: IndexRow[] = [];
    this.#batchRows = rows;
    try {
      return this.#writer.locked(body);
    } finally {
      this.#batchRows = undefined;
      const written = this.#writer.writtenSeq;
      for (const row of rows) if (row.seq <= written) this.#index?.add(row);
    }
  }

  /**
   * Entries matching every given filter, newest first (default limit 100),
   * selected by the index and read back from the log. Each says whether its
   * line still matches its MAC (`verified`); `verify()` checks the chain.
   * Without an index the log is scanned. A log changed where the index
   * points (a line edited to another length, removed, inserted) is `EIO`
   * naming the first line that does not verify.
   */
  query(filter: AuditQuery = {}): AuditRecord[] {
    this.#open();
    if (this.#index === undefined) return this.#scan(filter);
    const hits = this.#index.select(filter);
    const out: AuditRecord[] = [];
    const fds = new Map<number, number>();
    let buf = Buffer.alloc(4096);
    try {
      for (const h of hits) {
        let fd = fds.get(h.fileNo);
        if (fd === undefined) {
          try {
            fd = openSync(join(this.dir, fileName(h.fileNo)), 'r');
          } catch (err) {
            throw this.#mismatch(`${fileName(h.fileNo)} is gone`, err);
          }
          fds.set(h.fileNo, fd);
        }
        if (buf.length < h.length) buf = Buffer.alloc(h.length * 2);
        const got = readSync(fd, buf, 0, h.length, h.offset);
        const rec = got === h.length ? this.#record(buf, 0, h.length, fileName(h.fileNo), h.line) : undefined;
        if (rec === undefined || rec.seq !== h.seq) throw this.#mismatch(`seq ${h.seq} is not at ${fileName(h.fileNo)}:${h.line}`);
        out.push(rec);
      }
    } finally {
      for (const fd of fds.values()) closeSync(fd);
    }
    return out;
  }

  /**
   * The error of an index that does not match the log. Most often the log
   * was changed, and then the person needs the line that was, not where the
   * index noticed: the chain is verified to name it.
   */
  #mismatch(what: string, cause?: unknown): Error {
    const bad = this.verify().firstBad;
    if (bad === undefined) return staleIndex(what, this.remedies, cause);
    return fsError('EIO', 'audit', undefined, {
      reason: `the audit trail was changed: ${bad.file} line ${bad.line} (seq ${bad.seq}): ${bad.damage}, ${bad.detail}; ${this.dir}`,
      hint: `run ${this.remedies.verify} for the report; the log keeps the change as evidence. ${this.remedies.reindex} makes queries read the log as it is now, marking what does not verify`,
      cause,
    });
  }

  /**
   * `query` without the index: every file read, newest first. Slower than
   * `query` on a large log, and unaffected by an index the log no longer
   * matches — what a reader of a changed log uses.
   */
  scan(filter: AuditQuery = {}): AuditRecord[] {
    this.#open();
    return this.#scan(filter);
  }

  /**
   * The newest `limit` entries, newest first, read back from the end of the
   * log itself under its lock: not through the index, whose rows other
   * processes write a tick after their lines (a replay that asked the index
   * took lines just appended by others for missing, and appended them
   * again). The cost is the records read, not the file's size. Their
   * `location.line` is 0 (lines are not counted from the end), but for a
   * record that does not verify, whose line is counted.
   */
  newest(limit: number): AuditRecord[] {
    this.#open();
    return this.#writer.locked(() => {
      const out: AuditRecord[] = [];
      const files = listLogFiles(this.dir);
      for (let k = files.length - 1; k >= 0 && out.length < limit; k--) {
        const name = fileName(files[k] as number);
        const path = join(this.dir, name);
        const size = statSync(path).size;
        // About a kilobyte a record to start with, four times more while short.
        for (let window = Math.min(size, Math.max(TAIL_BYTES, (limit - out.length) * 1024)); ; window = Math.min(size, window * 4)) {
          const from = size - window;
          const bytes = readRange(path, from, size);
          // Whole lines only: after the first newline, unless the window starts the file.
          const nl = from === 0 ? -1 : bytes.indexOf(10);
          const first = from === 0 ? 0 : nl === -1 ? bytes.length : nl + 1;
          const found: AuditRecord[] = [];
          // Backwards from the last line, parsing (and checking the MAC of) only the records asked for.
          for (let end = bytes[bytes.length - 1] === 10 ? bytes.length - 1 : bytes.length; end >= first && found.length < limit - out.length; ) {
            const start = end === 0 ? 0 : Math.max(first, bytes.lastIndexOf(10, end - 1) + 1);
            let rec = start < end ? this.#record(bytes, start, end, name, 0) : undefined;
            // A line that does not verify is named by its line number, counted from the start only then.
            if (rec !== undefined && !rec.verified)
              rec = { ...rec, location: { file: name, line: countLines(readRange(path, 0, from + start), from + start) + 1 } };
            if (rec !== undefined) found.push(rec);
            end = start - 1;
          }
          if (found.length >= limit - out.length || from === 0) {
            for (const rec of found) if (out.length < limit) out.push(rec);
            break;
          }
        }
      }
      return out;
    });
  }

  /** A record from the line `buf[start, end)`, or undefined when it is not an entry. */
  #record(buf: Buffer, start: number, end: number, file: string, line: number): AuditRecord | undefined {
    const rec = parseLine(buf, start, end);
    if (rec === undefined || rec.type !== 'entry' || typeof rec.seq !== 'number') return undefined;
    const head = readLineHead(buf, start, end);
    const verified = head !== undefined && this.#key.macHex(buf, start, head.macInputEnd) === storedMac(buf, head);
    return { ...(rec as unknown as Omit<AuditRecord, 'location' | 'verified'>), location: { file, line }, verified };
  }

  /** `query` without an index: every file, newest first. */
  #scan(filter: AuditQuery): AuditRecord[] {
    const limit = Math.max(0, Math.floor(filter.limit ?? 100));
    const out: AuditRecord[] = [];
    const files = listLogFiles(this.dir);
    for (let k = files.length - 1; k >= 0 && out.length < limit; k--) {
      const name = fileName(files[k] as number);
      const bytes = readFileSync(join(this.dir, name));
      const found: AuditRecord[] = [];
      let line = 0;
      for (let p = 0; p < bytes.length; ) {
        const nl = bytes.indexOf(10, p);
        const end = nl === -1 ? bytes.length : nl;
        line++;
        const rec = this.#record(bytes, p, end, name, line);
        if (rec !== undefined && matches(rec, filter)) found.push(rec);
        p = end + 1;
      }
      for (let i = found.length - 1; i >= 0 && out.length < limit; i--) out.push(found[i] as AuditRecord);
    }
    return out;
  }

  /**
   * Checks every line of every file: MACs, links, sequence, rotation headers,
   * retention, and that the log still holds the newest record this trail or
   * its index knows. A log over `parallelMinBytes` (32 MiB) is checked on up
   * to `workers` threads (default: the cores not already busy by the load
   * average, at most 4; the calling thread waits), and again on one thread if anything is wrong, to name the first
   * bad line exactly. `workers: 1` keeps it on the calling thread.
   */
  verify(options: { readonly workers?: number; readonly parallelMinBytes?: number } = {}): VerifyReport {
    this.#open();
    // Under the lock: no other process's line is half written while the files are read.
    return this.#writer.locked(() => {
      const idx = this.#index?.newest();
      const tip = this.#writer.tip;
      const anchor: ChainAnchor = idx !== undefined && idx.seq > tip.seq ? { chain: tip.chain, ...idx } : tip;
      const names = listLogFiles(this.dir).map(fileName);
      // Threads help only where cores are free: on a machine already busy they make the wall time longer.
      const cores = availableParallelism();
      const workers = options.workers ?? Math.max(1, Math.min(4, cores, Math.round(cores - (loadavg()[0] ?? 0)) + 1));
      const fast = verifyParallel(this.dir, names, this.#key, this.#keyBytes, anchor, workers, options.parallelMinBytes);
      if (fast !== undefined) return fast;
      const sources = names.map((name) => ({ name, bytes: () => readFileSync(join(this.dir, name)) }));
      return verifyChain(sources, this.#key, anchor);
    });
  }

  /** Rebuilds the index from the log (it is a cache of it). Returns the entries indexed. */
  rebuildIndex(): number {
    this.#open();
    const ix = this.#index;
    if (ix === undefined) return 0;
    return this.#writer.locked(() => {
      ix.clear();
      ix.chain = this.#writer.tip.chain;
      const n = this.#indexLog(0);
      ix.complete = this.#writer.tip.seq;
      return n;
    });
  }

  /**
   * Indexes the entries after seq `after`, reading only what holds them: from
   * the line of entry `after` when the index knows where it is (and it is
   * there), else from the start of the file that holds it; with
   * `missingOnly`, only the entries the index does not hold yet.
   */
  #indexLog(after: number, missingOnly = false): number {
    const ix = this.#index;
    if (ix === undefined) return 0;
    const known = missingOnly ? ix.seqsAfter(after) : undefined;
    const files = listLogFiles(this.dir);
    // Files start with a header: skip those whose successor starts at or before `after`.
    let from = 0;
    for (let k = files.length - 1; k >= 0; k--) {
      if (firstSeqOf(join(this.dir, fileName(files[k] as number))) <= after) {
        from = k;
        break;
      }
    }
    const at = after > 0 ? this.#lineOf(ix, after, files[from]) : undefined;
    let n = 0;
    for (const no of files.slice(from)) {
      const path = join(this.dir, fileName(no));
      // Offsets below are the file's: `base` is where the bytes read begin.
      const base = no === at?.fileNo ? at.offset : 0;
      const bytes = base === 0 ? readFileSync(path) : readRange(path, base, statSync(path).size);
      let line = base === 0 ? 0 : (at?.line ?? 1) - 1;
      for (let p = 0; p < bytes.length; ) {
        const nl = bytes.indexOf(10, p);
        if (nl === -1) break;
        line++;
        const head = readLineHead(bytes, p, nl);
        if (head !== undefined && head.seq > after && !known?.has(head.seq) && isEntryType(bytes, head)) {
          const rec = parseLine(bytes, p, nl);
          if (rec !== undefined) {
            ix.add(indexRow(head.seq, Date.parse(String(rec.ts)), no, line, base + p, nl - p, storedMac(bytes, head), rec as unknown as AuditEntry));
            n++;
          }
        }
        p = nl + 1;
      }
    }
    ix.flush();
    return n;
  }

  /**
   * Where the newest indexed entry at or before `seq` is, as the index says,
   * when it is in `fileNo` (the file reading starts in) and the log holds
   * that entry's line there; else `undefined`, and the file is read from its
   * start. (Entry `seq` itself may be a header or repair line, never indexed.)
   */
  #lineOf(ix: AuditIndex, seq: number, fileNo: number | undefined): { fileNo: number; line: number; offset: number } | undefined {
    const at = ix.lineAtOrBefore(seq);
    if (at === undefined || at.fileNo !== fileNo) return undefined;
    // The whole line and its newline: a line's head is only read whole (its MAC closes it), and entry lines run
    // 500 bytes and more, so a fixed short read never recognized one and every open read the file from its start.
    const line = readRange(join(this.dir, fileName(at.fileNo)), at.offset, at.offset + at.length + 1);
    return line.length === at.length + 1 && line[at.length] === 10 && readLineHead(line, 0, at.length)?.seq === at.seq ? at : undefined;
  }

  /** Writes queued index rows, flushes the log and releases its lock. The state store stays open (the caller owns it). Idempotent. */
  close(): void {
    if (this.#closed) return;
    try {
      // What was handed to the thread reaches the log first, and its lines the index.
      if (this.#thread !== undefined) this.#settled(this.#stopThread());
    } finally {
      this.#closed = true;
      try {
        if (this.#index !== undefined && !this.#index.store.closed) this.#index.flush();
      } finally {
        this.#writer.close();
      }
    }
    const failed = this.#threadError;
    this.#threadError = undefined;
    if (failed !== undefined) throw failed;
  }

  #open(): void {
    if (this.#closed) throw fsError('ECLOSED', 'audit', undefined, { reason: 'the audit trail is closed' });
    this.#settle();
  }

  /**
   * Waits for the batches handed to the thread: anything this trail does to
   * the log comes after them in the chain, and queries find them indexed.
   */
  #settle(): void {
    const thread = this.#thread;
    if (thread === undefined || !thread.busy) return;
    const batches = thread.take(true);
    if (thread.status === 'failed') this.#stopThread();
    this.#settled(batches);
  }

  /** No more batches for the thread: it failed to open (or the trail is closing). Returns what it had not handled. */
  #stopThread(): AppendedBatch[] {
    const thread = this.#thread;
    this.#thread = undefined;
    this.#threadOff = true;
    return thread?.close() ?? [];
  }

  /** Indexes the lines of the batches the thread handled, and takes note of what it could not append. */
  #settled(batches: readonly AppendedBatch[]): void {
    for (const { entries, reply } of batches) {
      const { lines, macs } = reply;
      for (let k = 0; k * LINE_FIELDS < lines.length; k++) {
        const at = k * LINE_FIELDS;
        const n = (i: number) => lines[at + i] as number;
        const entry = entries[n(6)] as AuditEntry;
        this.#index?.add(indexRow(n(0), n(1), n(2), n(3), n(4), n(5), macs.slice(k * 64, k * 64 + 64), entry));
      }
      if (lines.length > 0) this.#threadWrote = true;
      if (reply.prunedBefore !== undefined) this.#index?.dropBefore(reply.prunedBefore);
      // In order: nothing was appended after them, since everything this trail appends waits for the thread first.
      if (reply.handedBack) this.#appendHere(entries);
      if (reply.error === undefined) continue;
      this.#threadError ??= fsError((reply.error.code as FsErrorCode | undefined) ?? 'EIO', 'audit', undefined, {
        reason: `the audit trail could not append ${entries.length - lines.length / LINE_FIELDS} of a batch of ${entries.length} records: ${reply.error.message}`,
        hint: `the state store keeps them: they are replayed when the trail is next opened (if among the newest records); run ${this.remedies.verify}`,
      });
    }
  }
}

/** Bytes {@link AuditTrail.newest} reads from the end of a file at least; four times more while short. */
const TAIL_BYTES = 16 * 1024;

function indexRow(seq: number, atMs: number, fileNo: number, line: number, offset: number, length: number, mac: string, e: AuditEntry): IndexRow {
  return {
    seq,
    atMs,
    fileNo,
    line,
    offset,
    length,
    mac,
    op: String(e.op),
    opClass: String(e.opClass),
    agent: String(e.agent),
    sessionId: String(e.sessionId),
    backend: String(e.backend),
    result: String(e.result),
    paths: Array.isArray(e.paths) ? e.paths.map(String) : [],
  };
}

function matches(r: AuditRecord, f: AuditQuery): boolean {
  if (f.path !== undefined && !r.paths.includes(f.path)) return false;
  if (f.agent !== undefined && r.agent !== f.agent) return false;
  if (f.sessionId !== undefined && r.sessionId !== f.sessionId) return false;
  if (f.op !== undefined && r.op !== f.op) return false;
  if (f.opClass !== undefined && r.opClass !== f.opClass) return false;
  if (f.backend !== undefined && r.backend !== f.backend) return false;
  if (f.result !== undefined && r.result !== f.result) return false;
  const at = Date.parse(r.ts);
  if (f.since !== undefined && at < f.since.getTime()) return false;
  if (f.until !== undefined && at >= f.until.getTime()) return false;
  return true;
}

function staleIndex(what: string, remedies: AuditRemedies, cause?: unknown): Error {
  return fsError('EIO', 'audit', undefined, {
    reason: `the audit index does not match the log: ${what}`,
    hint: `run ${remedies.verify} to see whether the log was changed, then ${remedies.reindex}`,
    cause,
  });
}

/**
 * The SQLite database holding a trail's index: the state store's own file
 * when it is SQLite. A PostgreSQL store has none here (the trail is a file of
 * this host, its index written under the trail's lock, synchronously), so its
 * queries scan the log.
 */
function indexDatabase(index: StateStore | SqliteDatabase | undefined): SqliteDatabase | undefined {
  if (index instanceof SqliteDatabase) return index;
  if (index instanceof SqliteStateStore) return index.database;
  return undefined;
}
