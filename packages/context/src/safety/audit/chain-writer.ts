/**
 * The writing end of the audit chain: append-only JSONL files in one
 * directory, rotated by size, the oldest deleted beyond a retention count,
 * one writer at a time (the log's lock, see log-lock.ts).
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
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fsError } from '@ctxfs/core';
import type { ChainKey } from './chain-key.ts';
import { GENESIS_PREV, type LineType, parseLine, readLineHead, sealFieldsJson, sealLine, storedMac } from './chain-line.ts';
import { LogLock } from './log-lock.ts';
import type { AuditRemedies } from './remedies.ts';
import { fileName, fileNumber } from './verify-chain.ts';

/** When the log is flushed to the disk. */
export type FsyncPolicy = 'always' | 'rotate' | 'never';

/** A chain position: what the next line links to. */
export interface ChainTip {
  readonly chain: string;
  readonly seq: number;
  readonly mac: string;
}

/**
 * A line's fields after `seq`, `prev`, `ts` and `type`, given its seq, the
 * MAC it links to and its time: an object, or that object's JSON (never
 * `{}`), as `entryJson` wrote an entry's on the thread that handed it over.
 */
export type LineFields = (seq: number, prev: string, ts: string) => Record<string, unknown> | string;

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
  /** How errors name checking the log (the trail's {@link AuditRemedies}). */
  readonly remedies: AuditRemedies;
  /** When a fresh chain starts while the index still knew an older one: named in the start header. */
  readonly previousChain?: (() => ChainTip | undefined) | undefined;
  /** After retention deleted files: the seq of the oldest line kept. */
  readonly onPrune?: ((oldestSeq: number) => void) | undefined;
  /**
   * The complete lines other processes appended since this writer last held
   * the lock, as it catches up with them (under the lock), file by file
   * when they rotated it meanwhile.
   */
  readonly onForeignLines?: ((lines: Buffer) => void) | undefined;
  /**
   * The newest line whose place the caller knows (the index's newest entry):
   * open reads the newest file from there instead of whole, so its cost does
   * not grow with the file. Checked against the file; ignored when it does
   * not match.
   */
  readonly knownLine?: (() => KnownLine | undefined) | undefined;
}

/** A line's place in the log, as recorded when it was written. */
export interface KnownLine {
  readonly seq: number;
  readonly fileNo: number;
  /** Its line number in the file, from 1. */
  readonly line: number;
  readonly offset: number;
}

/**
 * Where a writer stands in the log, for another writer of the same process
 * to start from (see {@link ChainWriter.from}) instead of reading the
 * newest file again.
 */
export interface WriterView {
  readonly chain: string;
  readonly seq: number;
  readonly mac: string;
  readonly fileNo: number;
  /** The inode of the file it appends to. */
  readonly ino: number;
  readonly fileBytes: number;
  readonly fileLines: number;
  readonly foreignKey: string | undefined;
  /** The lock file it locks (see {@link LogLock.identity}). */
  readonly lockIdentity: string | undefined;
}

/** Bytes of a file's start read for its header line; a longer header is read with the whole file. */
const HEADER_BYTES = 4096;

/** What a `repair` line says when it records a torn line that was cut. */
export const TORN_DETAIL = 'a line cut short by a crash was removed from the end of the log';

/** The fields of a `repair` line: what was cut from the end of the log, and what the index knew that the log lost. */
export function repairFields(
  chain: string,
  file: string,
  torn: TornTail | undefined,
  lost: Readonly<Record<string, unknown>> | null,
  detail: string,
): Record<string, unknown> {
  const cut = torn === undefined ? null : { file: torn.file, bytes: torn.bytes, sha256: torn.sha256 };
  return { chain, file, cut, lost, detail };
}

/** Bytes `[from, to)` of the file at `path` (fewer if it is shorter). */
export function readRange(path: string, from: number, to: number): Buffer {
  const out = Buffer.alloc(to - from);
  const fd = openSync(path, 'r');
  try {
    let got = 0;
    while (got < out.length) {
      const n = readSync(fd, out, got, out.length - got, from + got);
      if (n === 0) return out.subarray(0, got);
      got += n;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** The seq and MAC of the last line of `bytes[0, end)` that parses, if any. */
function lastChainLine(bytes: Buffer, end: number): { seq: number; mac: string } | undefined {
  while (end > 0) {
    const start = bytes.lastIndexOf(10, end - 1) + 1;
    const rec = parseLine(bytes, start, end);
    if (typeof rec?.seq === 'number' && typeof rec.mac === 'string') return { seq: rec.seq, mac: rec.mac };
    end = start - 1;
  }
  return undefined;
}

/** Newlines in `bytes[0, end)`. */
export function countLines(bytes: Buffer, end: number): number {
  let n = 0;
  for (let p = bytes.indexOf(10); p !== -1 && p < end; p = bytes.indexOf(10, p + 1)) n++;
  return n;
}

function tornTail(file: string, tail: Buffer): TornTail {
  return { file, bytes: tail.length, sha256: createHash('sha256').update(tail).digest('hex') };
}

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
  readonly #lock: LogLock;
  #holding = false;
  /** Lines appended in the current hold of the lock, written together when it ends (see {@link ChainWriter.locked}). */
  #unwritten: Array<{ readonly seq: number; readonly bytes: Uint8Array }> | undefined;
  /** The seq of the newest line this writer has put in the file. */
  #writtenSeq = 0;
  #fd = -1;
  /** The inode of the file `#fd` appends to: another name at its path means a reset or a rewrite. */
  #ino = 0;
  #fileNo = 0;
  #fileBytes = 0;
  #fileLines = 0;
  #chain = '';
  #seq = 0;
  #mac = GENESIS_PREV;
  #closed = false;
  #torn: TornTail | undefined;
  #fresh = false;
  /** The id of the key the log is written with, when it is not this writer's (see {@link ChainWriter.foreignKey}). */
  #foreignKey: string | undefined;

  private constructor(o: ChainWriterOptions, start: (w: ChainWriter) => void) {
    this.dir = o.dir;
    this.#o = o;
    mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    this.#lock = LogLock.open(o.dir, o.remedies);
    try {
      start(this);
    } catch (err) {
      if (this.#fd >= 0) closeSync(this.#fd);
      this.#fd = -1;
      this.#lock.close();
      throw err;
    }
  }

  /**
   * Opens the log in `o.dir`, positioned after the last complete line (a torn
   * one is cut and reported in `torn`), and runs `afterOpen` before any other
   * process can append.
   */
  static open(o: ChainWriterOptions, afterOpen?: (w: ChainWriter) => void): ChainWriter {
    return new ChainWriter(o, (w) =>
      w.#lock.hold(() => {
        w.#holding = true;
        try {
          const resumed = w.#resume();
          w.#torn = resumed.torn;
          w.#fresh = resumed.fresh;
          afterOpen?.(w);
        } finally {
          w.#holding = false;
        }
      }),
    );
  }

  /**
   * A second writer on the log another writer of this process has open,
   * standing where that one stood (`view`): it reads nothing now, and its
   * first hold of the lock catches up with what was appended since, as after
   * any other process's appends. Refused (`EIO`) when the directory's lock
   * file is no longer the one `view` locked: the log was deleted or replaced,
   * and a writer that started over there would fork the chain.
   */
  static from(o: ChainWriterOptions, view: WriterView): ChainWriter {
    return new ChainWriter(o, (w) => {
      if (w.#lock.identity !== view.lockIdentity) {
        throw fsError('EIO', 'audit', undefined, {
          reason: `the audit log directory ${o.dir} was deleted or replaced while this trail had it open`,
          hint: 'open the trail again (restart the command or the MCP server)',
        });
      }
      w.#chain = view.chain;
      w.#seq = w.#writtenSeq = view.seq;
      w.#mac = view.mac;
      w.#fileNo = view.fileNo;
      w.#fileBytes = view.fileBytes;
      w.#fileLines = view.fileLines;
      w.#foreignKey = view.foreignKey;
      try {
        // Appending, never creating: a file gone since (rotated away, deleted) is found so by the first catch-up.
        w.#fd = openSync(w.#path(view.fileNo), constants.O_WRONLY | constants.O_APPEND);
        w.#ino = fstatSync(w.#fd).ino === view.ino ? view.ino : -1;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        w.#ino = -1;
      }
    });
  }

  /** Where this writer stands, for {@link ChainWriter.from}. */
  get view(): WriterView {
    return {
      chain: this.#chain,
      seq: this.#seq,
      mac: this.#mac,
      fileNo: this.#fileNo,
      ino: this.#ino,
      fileBytes: this.#fileBytes,
      fileLines: this.#fileLines,
      foreignKey: this.#foreignKey,
      lockIdentity: this.#lock.identity,
    };
  }

  /**
   * Runs `body` holding the log's write lock, after catching up with what
   * other processes appended. Re-entrant.
   */
  locked<T>(body: () => T): T {
    if (this.#closed) throw fsError('ECLOSED', 'audit', undefined, { reason: 'the audit trail is closed' });
    if (this.#holding) return body();
    return this.#lock.hold(() => {
      this.#holding = true;
      try {
        this.#catchUp();
        // The lines of one hold go to the file in one write when it ends (a write each cost more than the line's MAC):
        // nobody else appends meanwhile, and they are all there before the lock is released.
        this.#unwritten = [];
        let out: T;
        try {
          out = body();
        } finally {
          // Lines appended before a failure in `body` are complete: they go to the file all the same.
          this.#writeOut();
        }
        return out;
      } catch (err) {
        // What this writer counted may not all be on disk (a failed write): the next hold takes its view from the
        // file again, cutting a torn last line and chaining a repair line, as for a killed writer.
        if (this.#seq !== this.#writtenSeq) this.#ino = -1;
        throw err;
      } finally {
        this.#unwritten = undefined;
        this.#holding = false;
      }
    });
  }

  /** Whether this writer is holding the log's lock (inside {@link ChainWriter.locked}). */
  get holding(): boolean {
    return this.#holding;
  }

  /** The seq of the newest line this writer has written to the file (lines of a hold of the lock are written when it ends). */
  get writtenSeq(): number {
    return this.#writtenSeq;
  }

  /** Writes the lines held back in this hold of the lock, then (with `fsync: 'always'`) syncs them. */
  #writeOut(): void {
    const lines = this.#unwritten;
    if (lines === undefined || lines.length === 0) return;
    this.#unwritten = [];
    const bytes = lines.length === 1 ? (lines[0] as { bytes: Uint8Array }).bytes : Buffer.concat(lines.map((l) => l.bytes));
    try {
      writeAll(this.#fd, bytes);
    } catch (err) {
      // All of them or none: lines that made it before the failure (a full disk) would be in the log but not indexed.
      try {
        ftruncateSync(this.#fd, this.#fileBytes - bytes.length);
      } catch {
        // The next hold cuts what it cannot parse, and the next open indexes what the log holds.
      }
      throw err;
    }
    this.#writtenSeq = (lines.at(-1) as { seq: number }).seq;
    if (this.#o.fsync === 'always') fsyncSync(this.#fd);
  }

  #path(n: number): string {
    return join(this.dir, fileName(n));
  }

  /** Brings this writer's view (file, seq, MAC, size) up to date with the log on disk. */
  #catchUp(): void {
    const st = statSync(this.#path(this.#fileNo), { throwIfNoEntry: false });
    const rotated = statSync(this.#path(this.#fileNo + 1), { throwIfNoEntry: false }) !== undefined;
    if (st !== undefined && !rotated && st.ino === this.#ino) {
      if (st.size === this.#fileBytes) return;
      if (st.size > this.#fileBytes) {
        this.#follow(st.size);
        return;
      }
    }
    const onForeign = this.#o.onForeignLines;
    if (rotated && onForeign !== undefined) {
      // Rotated by another writer: the lines it appended to this file before it did are others' too,
      // and so are those of every file it completed since (the newest one, #resume passes on).
      if (st !== undefined && st.ino === this.#ino && st.size > this.#fileBytes) {
        const rest = readRange(this.#path(this.#fileNo), this.#fileBytes, st.size);
        onForeign(rest.subarray(0, rest.lastIndexOf(10) + 1));
      }
      const between = listLogFiles(this.dir).filter((n) => n > this.#fileNo);
      for (const n of between.slice(0, -1)) {
        const bytes = readFileSync(this.#path(n));
        onForeign(bytes.subarray(0, bytes.lastIndexOf(10) + 1));
      }
    }
    // Rotated, reset or cut by someone else: start again from what the directory holds.
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
    const { torn } = this.#resume(rotated ? onForeign : undefined);
    if (torn !== undefined) this.#appendLine('repair', () => repairFields(this.#chain, fileName(this.#fileNo), torn, null, TORN_DETAIL));
  }

  /** Takes in the lines other processes appended to the current file, which now has `size` bytes. */
  #follow(size: number): void {
    const path = this.#path(this.#fileNo);
    const added = readRange(path, this.#fileBytes, size);
    const cut = added.lastIndexOf(10) + 1;
    if (cut > 0) this.#o.onForeignLines?.(added.subarray(0, cut));
    const last = lastChainLine(added, cut - 1);
    if (last !== undefined) {
      this.#seq = this.#writtenSeq = last.seq;
      this.#mac = last.mac;
    }
    this.#fileLines += countLines(added, cut);
    this.#fileBytes += cut;
    if (cut < added.length) {
      // Under the lock nobody is writing: a partial line is what a killed writer left.
      const torn = tornTail(fileName(this.#fileNo), added.subarray(cut));
      truncateSync(path, this.#fileBytes);
      this.#appendLine('repair', () => repairFields(this.#chain, fileName(this.#fileNo), torn, null, TORN_DETAIL));
    }
  }

  /** What open cut from a torn last line, if anything. */
  get torn(): TornTail | undefined {
    return this.#torn;
  }

  /** Whether open started a new chain. */
  get fresh(): boolean {
    return this.#fresh;
  }

  get tip(): ChainTip {
    return { chain: this.#chain, seq: this.#seq, mac: this.#mac };
  }

  get fileNo(): number {
    return this.#fileNo;
  }

  #resume(onLines?: (lines: Buffer) => void): { torn: TornTail | undefined; fresh: boolean } {
    let files = listLogFiles(this.dir);
    let torn: TornTail | undefined;
    // A writer killed between creating a file and writing its header leaves it empty.
    while (files.length > 0) {
      const last = files[files.length - 1] as number;
      const path = join(this.dir, fileName(last));
      // Catching up after a rotation needs every line (they go to onLines); an open needs only the header and the end.
      const part = (onLines === undefined ? this.#fromKnownLine(last, path) : undefined) ?? {
        head: undefined,
        at: 0,
        linesBefore: 0,
        bytes: readFileSync(path),
      };
      const { bytes, at } = part;
      const cut = bytes.lastIndexOf(10) + 1;
      if (cut < bytes.length) {
        torn = tornTail(fileName(last), bytes.subarray(cut));
        const fd = openSync(path, 'r+');
        try {
          ftruncateSync(fd, at + cut);
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
      onLines?.(bytes.subarray(0, cut));
      const lines = bytes.subarray(0, cut);
      this.#adopt(last, part.head ?? lines, lines, at, part.linesBefore);
      return { torn, fresh: false };
    }
    this.#genesis();
    return { torn, fresh: true };
  }

  /**
   * File `n` from the line {@link ChainWriterOptions.knownLine} names to its
   * end, with its header line; `undefined` (read it whole) when that line is
   * not in this file or not where it was written.
   */
  #fromKnownLine(n: number, path: string): { head: Buffer; at: number; linesBefore: number; bytes: Buffer } | undefined {
    const known = this.#o.knownLine?.();
    if (known === undefined || known.fileNo !== n || known.offset <= 0 || known.line < 2) return undefined;
    const start = readRange(path, 0, HEADER_BYTES);
    const headEnd = start.indexOf(10);
    if (headEnd === -1 || headEnd >= known.offset) return undefined;
    const bytes = readRange(path, known.offset, statSync(path).size);
    const nl = bytes.indexOf(10);
    if (nl === -1 || readLineHead(bytes, 0, nl)?.seq !== known.seq) return undefined;
    return { head: start.subarray(0, headEnd + 1), at: known.offset, linesBefore: known.line - 1, bytes };
  }

  /**
   * Continues the chain from the end of file `n`: `head` holds its header
   * line, `bytes` its complete lines from byte `at` (line `linesBefore + 1`)
   * to its end.
   */
  #adopt(n: number, head: Buffer, bytes: Buffer, at: number, linesBefore: number): void {
    const header = parseLine(head, 0, head.indexOf(10));
    this.#chain = typeof header?.chain === 'string' ? header.chain : 'unknown';
    const lines = linesBefore + countLines(bytes, bytes.length);
    // The last line that parses gives the tip; a damaged one is verify()'s to report, not a reason to stop auditing.
    const last = lastChainLine(bytes, bytes.length - 1);
    if (last === undefined) {
      throw fsError('EIO', 'audit', undefined, {
        reason: `${fileName(n)} holds no readable chain line`,
        hint: 'run verify() to see the damage; AuditTrail.reset() starts a new log',
      });
    }
    this.#seq = this.#writtenSeq = last.seq;
    this.#mac = last.mac;
    // A header naming another key, and a last line that does not verify under this one: another host's or
    // user's key, not an edit (an edited header would not verify under the log's key either).
    const keyId = header?.keyId;
    this.#foreignKey = typeof keyId === 'string' && keyId !== this.#o.key.id && !this.#lastLineVerifies(bytes) ? keyId : undefined;
    this.#fileNo = n;
    this.#fileBytes = at + bytes.length;
    this.#fileLines = lines;
    this.#fd = openSync(join(this.dir, fileName(n)), 'a');
    this.#ino = fstatSync(this.#fd).ino;
  }

  /** Whether the last line of `bytes` (complete lines) matches its MAC under this writer's key. */
  #lastLineVerifies(bytes: Buffer): boolean {
    const end = bytes.length - 1;
    const start = bytes.lastIndexOf(10, end - 1) + 1;
    const head = readLineHead(bytes, start, end);
    return head !== undefined && this.#o.key.macHex(bytes, start, head.macInputEnd) === storedMac(bytes, head);
  }

  /**
   * The id of the key the log was written with, when this writer holds
   * another: it may read the log (verify names the wrong key), but never
   * append to it, since every line it wrote would fail verification as if
   * tampered with.
   */
  get foreignKey(): string | undefined {
    return this.#foreignKey;
  }

  #genesis(): void {
    this.#foreignKey = undefined;
    this.#chain = randomUUID();
    this.#seq = this.#writtenSeq = 0;
    this.#mac = GENESIS_PREV;
    const previous = this.#o.previousChain?.();
    this.#create(1);
    const fields: Record<string, unknown> = { chain: this.#chain, file: fileName(1), keyId: this.#o.key.id, format: 1 };
    if (previous !== undefined) fields.previousChain = { chain: previous.chain, seq: previous.seq, mac: previous.mac };
    this.#appendLine('start', () => fields);
  }

  #create(n: number): void {
    // 'ax': a file that exists is never taken for a new one (another writer, or a stale view); and
    // appending, so a line always lands at the end whoever else has written to the file since.
    this.#fd = openSync(join(this.dir, fileName(n)), 'ax', 0o600);
    this.#ino = fstatSync(this.#fd).ino;
    this.#fileNo = n;
    this.#fileBytes = 0;
    this.#fileLines = 0;
  }

  /**
   * Appends one line of `type` whose other fields `fields(seq, prev, ts)`
   * builds (in the order they are to be written; an entry's may come as their
   * JSON object, serialized already: see {@link LineFields}). Rotates first when the line
   * would take the file over its size. Takes the log's write lock for the
   * line (see {@link ChainWriter.locked}); inside a hold of it, the line
   * reaches the file when the hold ends.
   */
  append(type: LineType, fields: LineFields): WrittenLine {
    return this.locked(() => this.#appendLine(type, fields));
  }

  #appendLine(type: LineType, fields: LineFields): WrittenLine {
    if (this.#foreignKey !== undefined && type !== 'start') {
      throw fsError('EACCES', 'audit', undefined, {
        reason: `the audit log in ${this.dir} is written with key ${this.#foreignKey}, and this process holds key ${this.#o.key.id}: its records would not verify`,
        hint: 'use the key file the log was written with (copy it to this host, 0600), or give this host an audit directory of its own',
      });
    }
    const build = () => {
      const ts = new Date().toISOString();
      const seq = this.#seq + 1;
      const f = fields(seq, this.#mac, ts);
      const line =
        typeof f === 'string' ? sealFieldsJson(seq, this.#mac, ts, type, f, this.#o.key) : sealLine({ seq, prev: this.#mac, ts, type, ...f }, this.#o.key);
      return { ts, seq, line };
    };
    let b = build();
    if (type !== 'start' && this.#fileLines > 1 && this.#fileBytes + b.line.bytes.length > this.#o.maxFileBytes) {
      this.#rotate();
      b = build();
    }
    const offset = this.#fileBytes;
    if (this.#unwritten !== undefined) this.#unwritten.push({ seq: b.seq, bytes: b.line.bytes });
    else {
      writeAll(this.#fd, b.line.bytes);
      this.#writtenSeq = b.seq;
      if (this.#o.fsync === 'always') fsyncSync(this.#fd);
    }
    this.#fileBytes += b.line.bytes.length;
    this.#fileLines++;
    this.#seq = b.seq;
    this.#mac = b.line.mac;
    return { seq: b.seq, mac: b.line.mac, fileNo: this.#fileNo, line: this.#fileLines, offset, length: b.line.bytes.length - 1, ts: b.ts };
  }

  #rotate(): void {
    // The lines held back belong to the file being completed.
    this.#writeOut();
    const prevNo = this.#fileNo;
    if (this.#o.fsync !== 'never') fsyncSync(this.#fd);
    closeSync(this.#fd);
    this.#fd = -1;
    const next = prevNo + 1;
    const files = listLogFiles(this.dir);
    const keepFrom = Number.isFinite(this.#o.retainFiles) ? Math.max(files[0] ?? next, next - this.#o.retainFiles + 1) : (files[0] ?? next);
    this.#create(next);
    this.#appendLine('rotate', () => ({
      chain: this.#chain,
      file: fileName(next),
      prevFile: fileName(prevNo),
      oldest: fileName(keepFrom),
      keyId: this.#o.key.id,
    }));
    // The header must be in the file before anything it names as gone is deleted.
    this.#writeOut();
    if (this.#o.fsync !== 'never') fsyncDir(this.dir);
    // Delete only after the header naming the oldest kept file is written: a crash in between leaves extra files, never a gap.
    const doomed = files.filter((n) => n < keepFrom);
    if (doomed.length > 0) {
      for (const n of doomed) unlinkSync(join(this.dir, fileName(n)));
      this.#o.onPrune?.(firstSeqOf(join(this.dir, fileName(keepFrom))));
    }
  }

  /** Flushes and closes the current file and releases the locks. Idempotent. */
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
      this.#lock.close();
    }
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
