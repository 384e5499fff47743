/**
 * The writing end of the audit chain: append-only JSONL files in one
 * directory, rotated by size, the oldest deleted beyond a retention count,
 * one writer at a time (a pid lock file).
 *
 * Every file begins with a header line: `start` for the chain's first file
 * (seq 1, `prev` all zeros, a random chain id, the key's id), `rotate` for
 * the next ones (naming the file before it and the oldest file kept). A
 * header is a chain line like any other: its `prev` is the MAC of the last
 * line of the previous file, so after retention deleted older files the
 * first kept file still starts with an authenticated anchor.
 *
 * Durability: a line is written with one `write(2)` on a descriptor opened
 * for appending, so it is in the kernel's page cache — safe from a killed
 * process — when `append` returns. `fsync: 'always'` also flushes it to the
 * disk before returning (safe from power loss, a few milliseconds a record on
 * a disk); the default `'rotate'` flushes when a file is completed and on
 * close; `'never'` leaves it to the kernel.
 *
 * @module
 */

import { createHash, randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fsError } from '@ctxfs/core';
import type { ChainKey } from './chain-key.ts';
import { GENESIS_PREV, type LineType, parseLine, sealLine } from './chain-line.ts';
import { fileName, fileNumber } from './verify-chain.ts';

/** When the log is flushed to the disk. */
export type FsyncPolicy = 'always' | 'rotate' | 'never';

/** A chain position: what the next line links to. */
export interface ChainTip {
  readonly chain: string;
  readonly seq: number;
  readonly mac: string;
}

/** A line as written. */
export interface WrittenLine {
  readonly seq: number;
  readonly mac: string;
  readonly fileNo: number;
  readonly line: number;
  readonly offset: number;
  readonly length: number;
  readonly ts: string;
}

/** What open found at the end of the log and cut. */
export interface TornTail {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface ChainWriterOptions {
  readonly dir: string;
  readonly key: ChainKey;
  readonly maxFileBytes: number;
  /** Files kept; older ones are deleted at rotation. `Infinity` keeps all. */
  readonly retainFiles: number;
  readonly fsync: FsyncPolicy;
  /** When a fresh chain starts while the index still knew an older one: named in the start header. */
  readonly previousChain?: (() => ChainTip | undefined) | undefined;
  /** After retention deleted files: the seq of the oldest line kept. */
  readonly onPrune?: ((oldestSeq: number) => void) | undefined;
}

const LOCK = 'audit.lock';

/** Log file numbers present in `dir`, ascending. */
export function listLogFiles(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .map(fileNumber)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
}

/** Appends chain lines to the log in one directory. */
export class ChainWriter {
  readonly dir: string;
  readonly #o: ChainWriterOptions;
  #fd = -1;
  #fileNo = 0;
  #fileBytes = 0;
  #fileLines = 0;
  #chain = '';
  #seq = 0;
  #mac = GENESIS_PREV;
  #closed = false;
  /** What open cut from a torn last line, if anything. */
  readonly torn: TornTail | undefined;
  /** Whether open started a new chain. */
  readonly fresh: boolean;

  private constructor(o: ChainWriterOptions) {
    this.dir = o.dir;
    this.#o = o;
    mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    lockDir(o.dir);
    try {
      const r = this.#resume();
      this.torn = r.torn;
      this.fresh = r.fresh;
    } catch (err) {
      this.#release();
      throw err;
    }
  }

  /** Takes the directory's lock and positions after the last complete line (cutting a torn one). */
  static open(o: ChainWriterOptions): ChainWriter {
    return new ChainWriter(o);
  }

  get tip(): ChainTip {
    return { chain: this.#chain, seq: this.#seq, mac: this.#mac };
  }

  get fileNo(): number {
    return this.#fileNo;
  }

  #resume(): { torn: TornTail | undefined; fresh: boolean } {
    let files = listLogFiles(this.dir);
    let torn: TornTail | undefined;
    // A writer killed between creating a file and writing its header leaves it empty.
    while (files.length > 0) {
      const last = files[files.length - 1] as number;
      const path = join(this.dir, fileName(last));
      const bytes = readFileSync(path);
      const cut = bytes.lastIndexOf(10) + 1;
      if (cut < bytes.length) {
        torn = { file: fileName(last), bytes: bytes.length - cut, sha256: createHash('sha256').update(bytes.subarray(cut)).digest('hex') };
        const fd = openSync(path, 'r+');
        try {
          ftruncateSync(fd, cut);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
      if (cut === 0) {
        unlinkSync(path);
        files = files.slice(0, -1);
        continue;
      }
      this.#adopt(last, bytes.subarray(0, cut));
      return { torn, fresh: false };
    }
    this.#genesis();
    return { torn, fresh: true };
  }

  /** Continues the chain from the end of file `n`, whose complete lines are `bytes`. */
  #adopt(n: number, bytes: Buffer): void {
    const firstEnd = bytes.indexOf(10);
    const header = parseLine(bytes, 0, firstEnd);
    this.#chain = typeof header?.chain === 'string' ? header.chain : 'unknown';
    let lines = 0;
    for (let p = bytes.indexOf(10); p !== -1; p = bytes.indexOf(10, p + 1)) lines++;
    // The last line that parses gives the tip; a damaged one is verify()'s to report, not a reason to stop auditing.
    let end = bytes.length - 1;
    while (end > 0) {
      const start = bytes.lastIndexOf(10, end - 1) + 1;
      const rec = parseLine(bytes, start, end);
      if (typeof rec?.seq === 'number' && typeof rec.mac === 'string') {
        this.#seq = rec.seq;
        this.#mac = rec.mac;
        break;
      }
      end = start - 1;
    }
    if (end <= 0) {
      throw fsError('EIO', 'audit', undefined, {
        reason: `${fileName(n)} holds no readable chain line`,
        hint: 'run verify() to see the damage; AuditTrail.reset() starts a new log',
      });
    }
    this.#fileNo = n;
    this.#fileBytes = bytes.length;
    this.#fileLines = lines;
    this.#fd = openSync(join(this.dir, fileName(n)), 'a');
  }

  #genesis(): void {
    this.#chain = randomUUID();
    this.#seq = 0;
    this.#mac = GENESIS_PREV;
    const previous = this.#o.previousChain?.();
    this.#create(1);
    const fields: Record<string, unknown> = { chain: this.#chain, file: fileName(1), keyId: this.#o.key.id, format: 1 };
    if (previous !== undefined) fields.previousChain = { chain: previous.chain, seq: previous.seq, mac: previous.mac };
    this.append('start', () => fields);
  }

  #create(n: number): void {
    // 'wx': a file that exists is never appended to as a new one (another writer, or a stale view).
    this.#fd = openSync(join(this.dir, fileName(n)), 'wx', 0o600);
    this.#fileNo = n;
    this.#fileBytes = 0;
    this.#fileLines = 0;
  }

  /**
   * Appends one line of `type` whose other fields `fields(seq, prev, ts)`
   * builds (in the order they are to be written). Rotates first when the line
   * would take the file over its size.
   */
  append(type: LineType, fields: (seq: number, prev: string, ts: string) => Record<string, unknown>): WrittenLine {
    if (this.#closed) throw fsError('ECLOSED', 'audit', undefined, { reason: 'the audit trail is closed' });
    const build = () => {
      const ts = new Date().toISOString();
      const seq = this.#seq + 1;
      return { ts, seq, line: sealLine({ seq, prev: this.#mac, ts, type, ...fields(seq, this.#mac, ts) }, this.#o.key) };
    };
    let b = build();
    if (type !== 'start' && this.#fileLines > 1 && this.#fileBytes + b.line.bytes.length > this.#o.maxFileBytes) {
      this.#rotate();
      b = build();
    }
    const offset = this.#fileBytes;
    writeAll(this.#fd, b.line.bytes);
    if (this.#o.fsync === 'always') fsyncSync(this.#fd);
    this.#fileBytes += b.line.bytes.length;
    this.#fileLines++;
    this.#seq = b.seq;
    this.#mac = b.line.mac;
    return { seq: b.seq, mac: b.line.mac, fileNo: this.#fileNo, line: this.#fileLines, offset, length: b.line.bytes.length - 1, ts: b.ts };
  }

  #rotate(): void {
    const prevNo = this.#fileNo;
    if (this.#o.fsync !== 'never') fsyncSync(this.#fd);
    closeSync(this.#fd);
    this.#fd = -1;
    const next = prevNo + 1;
    const files = listLogFiles(this.dir);
    const keepFrom = Number.isFinite(this.#o.retainFiles) ? Math.max(files[0] ?? next, next - this.#o.retainFiles + 1) : (files[0] ?? next);
    this.#create(next);
    this.append('rotate', () => ({ chain: this.#chain, file: fileName(next), prevFile: fileName(prevNo), oldest: fileName(keepFrom) }));
    if (this.#o.fsync !== 'never') fsyncDir(this.dir);
    // Delete only after the header naming the oldest kept file is written: a crash in between leaves extra files, never a gap.
    const doomed = files.filter((n) => n < keepFrom);
    if (doomed.length > 0) {
      for (const n of doomed) unlinkSync(join(this.dir, fileName(n)));
      this.#o.onPrune?.(firstSeqOf(join(this.dir, fileName(keepFrom))));
    }
  }

  /** Flushes and closes the current file and releases the lock. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      if (this.#fd >= 0) {
        if (this.#o.fsync !== 'never') fsyncSync(this.#fd);
        closeSync(this.#fd);
      }
    } finally {
      this.#fd = -1;
      this.#release();
    }
  }

  #release(): void {
    unlockDir(this.dir);
  }
}

/** Releases the lock taken by {@link lockDir}. */
export function unlockDir(dir: string): void {
  try {
    unlinkSync(join(dir, LOCK));
  } catch {
    // already gone: nothing to release
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The seq of a log file's first line (its header), read from its first bytes; 0 when unreadable. */
export function firstSeqOf(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(64);
    const got = readSync(fd, buf, 0, 64, 0);
    const m = /^\{"seq":(\d+)/.exec(buf.toString('latin1', 0, got));
    return m ? Number(m[1]) : 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes a log directory's lock: one writer a directory. The lock file holds
 * the writer's pid; a lock left by a process that no longer exists (killed)
 * is taken over.
 */
export function lockDir(dir: string): void {
  const path = join(dir, LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let pid = 0;
    try {
      pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    } catch {
      continue; // released in between: try again
    }
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      throw fsError('EBUSY', 'audit', undefined, {
        reason: `the audit log in ${dir} is open in process ${pid}${pid === process.pid ? ' (this one)' : ''}`,
        hint: 'one AuditTrail a log directory: share the open trail, or close it first',
      });
    }
    try {
      unlinkSync(path);
    } catch {
      // another process took it over first; the next attempt finds its lock
    }
  }
  throw fsError('EBUSY', 'audit', undefined, { reason: `could not take the audit log lock in ${dir}`, hint: 'retry' });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
