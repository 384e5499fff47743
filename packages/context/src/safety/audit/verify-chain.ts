/**
 * Verification of an audit chain: every line's MAC, every link to the line
 * before, across rotated files, against what the trail knows of its newest
 * record. Stops at the first line that does not verify and says which line
 * it is and what was most likely done to it.
 *
 * The common case — an intact line — is checked from the bytes without
 * parsing JSON (fixed layout, see `chain-line.ts`); only headers and the
 * first bad line are parsed.
 *
 * @module
 */

import { hash } from 'node:crypto';
import type { ChainKey } from './chain-key.ts';
import {
  ENTRY_TYPE,
  GENESIS_PREV,
  type LineHead,
  MAC_HEAD,
  MAC_SUFFIX_BYTES,
  PREV_HEAD,
  parseLine,
  readLineHead,
  SEQ_HEAD,
  storedMac,
  storedPrev,
  TS_CHARS,
  TS_HEAD,
} from './chain-line.ts';

/**
 * What was done to the log, as far as the first bad line tells:
 *
 * - `edited`: a line whose MAC does not match its content, in its place (a flipped byte, a field changed and re-serialized);
 * - `unkeyed`: a line whose MAC is a plain SHA-256 of its content — someone rebuilt the chain without the key (an inserted or edited record);
 * - `inserted`: a line that is not authentic between two lines that chain to each other;
 * - `removed`: authentic lines, or whole rotated files, missing from the middle of the chain;
 * - `duplicated`: an authentic line seen again later;
 * - `reordered`: an authentic line before one that should precede it;
 * - `truncated`: the log ends before the newest record the trail knows, a line is cut short (a torn write), or a rotated file lost its tail;
 * - `spliced`: authentic lines from another place or chain: a rotated file renamed, swapped, replaced by one of another log, or merged into another.
 */
export type DamageKind = 'edited' | 'unkeyed' | 'inserted' | 'removed' | 'duplicated' | 'reordered' | 'truncated' | 'spliced' | 'wrong-key';

/** The first line that does not verify. */
export interface VerifyDamage {
  /** The log file (`audit-000003.jsonl`). */
  readonly file: string;
  /** 1-based line in that file; one past its last line when what is missing lies at its end. */
  readonly line: number;
  /** The chain position expected there. */
  readonly seq: number;
  readonly damage: DamageKind;
  /** What was found, in words. */
  readonly detail: string;
}

/** What {@link verifyChain} found. */
export interface VerifyReport {
  readonly ok: boolean;
  /** Lines verified before the first bad one (all of them when `ok`). */
  readonly records: number;
  /** Of those, entries (the rest are headers and repair notes). */
  readonly entries: number;
  readonly files: number;
  /** Repairs the log records (torn last lines cut after a crash; no acknowledged record lost). */
  readonly repairs: number;
  /** The last verified line's seq and MAC (0 and the genesis value for an empty log). */
  readonly lastSeq: number;
  readonly lastMac: string;
  /** The chain id named by the first header, when it was read. */
  readonly chain?: string;
  /** Threads that verified the log (1 unless `AuditTrail.verify` split a large one). */
  readonly threads: number;
  readonly firstBad?: VerifyDamage;
}

/** A log file to verify: its name, and its bytes on demand (files are read one at a time). */
export interface ChainFileSource {
  readonly name: string;
  bytes(): Uint8Array;
}

/**
 * The newest record the trail knows exists — from its own appends or its
 * index — and the chain it belongs to. A log that ends before it was
 * truncated; one whose first header names another chain was replaced.
 */
export interface ChainAnchor {
  readonly chain: string;
  readonly seq: number;
  readonly mac: string;
}

const FILE_NAME = /^audit-(\d{6,})\.jsonl$/;

/** The number in a log file's name, or -1. */
export function fileNumber(name: string): number {
  const m = FILE_NAME.exec(name);
  return m ? Number(m[1]) : -1;
}

/** The name of log file `n`: `audit-000001.jsonl`. */
export function fileName(n: number): string {
  return `audit-${String(n).padStart(6, '0')}.jsonl`;
}

class Damage extends Error {
  readonly report: VerifyDamage;
  constructor(report: VerifyDamage) {
    super(report.detail);
    this.report = report;
  }
}

interface Line {
  readonly buf: Buffer;
  readonly start: number;
  readonly end: number; // the newline, or buf.length for a line without one
  readonly head: LineHead | undefined;
}

/**
 * Retention deletes the oldest files; the newest rotation header names the
 * oldest file it kept, so files missing from the front beyond that were
 * removed by someone else. Checked once the rest of the chain holds (a log
 * cut at the tail has an older newest header).
 */
export function retentionDamage(files: readonly ChainFileSource[], key: ChainKey): VerifyDamage | undefined {
  const n = files.length;
  if (n < 2) return undefined;
  const last = files[n - 1] as ChainFileSource;
  const u = last.bytes();
  const buf = Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  const end = buf.indexOf(10);
  const head = end === -1 ? undefined : readLineHead(buf, 0, end);
  if (head === undefined || key.macHex(buf, 0, head.macInputEnd) !== storedMac(buf, head)) return undefined; // reported when reached
  const h = parseLine(buf, 0, end);
  if (h?.file !== last.name) return undefined;
  const oldest = typeof h.oldest === 'string' ? fileNumber(h.oldest) : -1;
  const first = (files[0] as ChainFileSource).name;
  if (oldest > 0 && fileNumber(first) > oldest) {
    return {
      file: first,
      line: 1,
      seq: 0,
      damage: 'removed',
      detail: `the newest rotation kept files from ${String(h.oldest)}, but the log starts at ${first}`,
    };
  }
  return undefined;
}

/** Options of {@link verifyChain}. */
export interface VerifyChainOptions {
  /**
   * The files are a run from the middle of the log (a parallel verification's
   * share): leave out the retention check, which is about the whole log.
   */
  readonly partial?: boolean;
}

/**
 * Verifies a chain held in `files` (in order of their numbers) with `key`.
 *
 * @example
 * ```ts
 * const report = verifyChain(names.map((name) => ({ name, bytes: () => readFileSync(join(dir, name)) })), key, anchor);
 * if (!report.ok) console.error(report.firstBad); // { file, line, seq, damage, detail }
 * ```
 */
export function verifyChain(files: readonly ChainFileSource[], key: ChainKey, anchor?: ChainAnchor, options: VerifyChainOptions = {}): VerifyReport {
  return new Verifier(files, key, anchor, options.partial === true).run();
}

/**
 * Whether `buf[at, at + n)` equals `pattern[0, n)`. A loop the JIT compiles
 * beats `Buffer.compare` for the few dozen bytes compared here: the native
 * call and its argument checks cost more than the comparing.
 */
function same(buf: Buffer, at: number, pattern: Buffer, n: number): boolean {
  if (at + n > buf.length) return false;
  for (let k = 0; k < n; k++) if (buf[at + k] !== pattern[k]) return false;
  return true;
}

class Verifier {
  records = 0;
  entries = 0;
  repairs = 0;
  expSeq = 0;
  expPrev = GENESIS_PREV;
  chain: string | undefined;
  // expPrev as bytes, for comparing in place; and the buffer the next MAC is written to.
  #prevBytes = Buffer.from(GENESIS_PREV, 'latin1');
  #nextBytes = Buffer.alloc(64);
  readonly #cache = new Map<number, Buffer>();

  readonly files: readonly ChainFileSource[];
  readonly key: ChainKey;
  readonly anchor: ChainAnchor | undefined;
  readonly partial: boolean;

  constructor(files: readonly ChainFileSource[], key: ChainKey, anchor: ChainAnchor | undefined, partial: boolean) {
    this.files = files;
    this.key = key;
    this.anchor = anchor;
    this.partial = partial;
  }

  bytesOf(i: number): Buffer {
    let b = this.#cache.get(i);
    if (b === undefined) {
      const u = (this.files[i] as ChainFileSource).bytes();
      b = Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
      // Keep the file being read and its neighbour for look-ahead; drop the rest to bound memory.
      for (const k of this.#cache.keys()) if (k < i - 1) this.#cache.delete(k);
      this.#cache.set(i, b);
    }
    return b;
  }

  run(): VerifyReport {
    try {
      let lines = 0;
      for (let i = 0; i < this.files.length; i++) {
        lines = this.#file(i);
      }
      const last = this.files[this.files.length - 1];
      if (this.anchor !== undefined && this.expSeq - 1 < this.anchor.seq) {
        throw this.damage(
          last?.name ?? fileName(1),
          lines + 1,
          this.expSeq,
          'truncated',
          `the log ends at seq ${this.expSeq - 1}, but seq ${this.anchor.seq} was written (mac ${this.anchor.mac.slice(0, 12)}…)`,
        );
      }
      // Last: files missing from the front are only told by the newest header, once the rest holds.
      if (!this.partial) this.#checkRetention();
      return this.report();
    } catch (err) {
      if (err instanceof Damage) return this.report(err.report);
      throw err;
    }
  }

  report(firstBad?: VerifyDamage): VerifyReport {
    const base = {
      ok: firstBad === undefined,
      records: this.records,
      entries: this.entries,
      files: this.files.length,
      repairs: this.repairs,
      lastSeq: this.expSeq === 0 ? 0 : this.expSeq - 1,
      lastMac: this.expPrev,
      ...(this.chain === undefined ? {} : { chain: this.chain }),
      threads: 1,
    };
    return firstBad === undefined ? base : { ...base, firstBad };
  }

  damage(file: string, line: number, seq: number, damage: DamageKind, detail: string): Damage {
    return new Damage({ file, line, seq, damage, detail });
  }

  #checkRetention(): void {
    const bad = retentionDamage(this.files, this.key);
    if (bad !== undefined) throw new Damage(bad);
  }

  #lineAt(fileIdx: number, pos: number): Line | undefined {
    const buf = this.bytesOf(fileIdx);
    if (pos >= buf.length) return undefined;
    const nl = buf.indexOf(10, pos);
    const end = nl === -1 ? buf.length : nl;
    return { buf, start: pos, end, head: nl === -1 ? undefined : readLineHead(buf, pos, end) };
  }

  #authentic(l: Line): boolean {
    return l.head !== undefined && this.key.macHex(l.buf, l.start, l.head.macInputEnd) === storedMac(l.buf, l.head);
  }

  /** Verifies file `i`; returns its number of lines. */
  #file(i: number): number {
    const src = this.files[i] as ChainFileSource;
    const buf = this.bytesOf(i);
    let pos = 0;
    let line = 0;
    const anchorSeq = this.anchor?.seq ?? -1;
    while (pos < buf.length) {
      line++;
      const nl = buf.indexOf(10, pos);
      if (nl === -1) {
        throw this.damage(
          src.name,
          line,
          this.expSeq,
          'truncated',
          `line ${line} is cut short: ${buf.length - pos} bytes and no newline (a torn write, or the file was cut)`,
        );
      }
      let mac = line === 1 ? undefined : this.#fast(buf, pos, nl);
      if (mac === undefined) {
        // Headers, repair notes and anything that failed the fast path.
        const head = readLineHead(buf, pos, nl);
        mac = this.#slowLine(i, line, { buf, start: pos, end: nl, head });
        this.#prevBytes.write(mac, 0, 'latin1');
      } else {
        this.entries++;
      }
      const seq = this.expSeq;
      if (seq === anchorSeq && mac !== this.anchor?.mac) {
        throw this.damage(src.name, line, seq, 'spliced', `seq ${seq} is not the record the trail wrote (mac ${String(this.anchor?.mac).slice(0, 12)}…)`);
      }
      this.records++;
      this.expPrev = mac;
      this.expSeq++;
      pos = nl + 1;
    }
    return line;
  }

  /**
   * The fast path: the line is an entry in its place — it begins with the
   * expected seq and prev, and ends with the MAC of what precedes it —
   * compared as bytes (one memcmp each) without parsing. Returns its MAC.
   */
  #fast(buf: Buffer, pos: number, nl: number): string | undefined {
    if (this.expSeq === 0) return undefined;
    const macInputEnd = nl - MAC_SUFFIX_BYTES;
    if (macInputEnd - pos < 120 || !same(buf, pos, SEQ_HEAD, SEQ_HEAD.length)) return undefined;
    let at = pos + SEQ_HEAD.length;
    let seq = 0;
    for (let c = buf[at] as number; c >= 0x30 && c <= 0x39 && seq < this.expSeq; c = buf[++at] as number) seq = seq * 10 + (c - 0x30);
    if (seq !== this.expSeq || !same(buf, at, PREV_HEAD, PREV_HEAD.length)) return undefined;
    at += PREV_HEAD.length;
    if (!same(buf, at, this.#prevBytes, 64)) return undefined;
    at += 64;
    if (!same(buf, at, TS_HEAD, TS_HEAD.length)) return undefined;
    const typeAt = at + TS_HEAD.length + TS_CHARS;
    if (macInputEnd < typeAt + ENTRY_TYPE.length || !same(buf, typeAt, ENTRY_TYPE, ENTRY_TYPE.length)) return undefined;
    if (!same(buf, macInputEnd, MAC_HEAD, MAC_HEAD.length) || buf[nl - 2] !== 0x22 || buf[nl - 1] !== 0x7d) return undefined;
    const mac = this.key.macHex(buf, pos, macInputEnd);
    const next = this.#nextBytes;
    next.write(mac, 0, 'latin1');
    if (!same(buf, macInputEnd + MAC_HEAD.length, next, 64)) return undefined;
    // The MAC just checked is the prev the next line must carry.
    this.#nextBytes = this.#prevBytes;
    this.#prevBytes = next;
    return mac;
  }

  /** A line off the fast path: a header, a repair note, or damage. Returns its MAC when it verifies. */
  #slowLine(i: number, lineNo: number, l: Line): string {
    const name = (this.files[i] as ChainFileSource).name;
    const authentic = this.#authentic(l);
    if (!authentic) throw this.#notAuthentic(i, lineNo, l);
    const head = l.head as LineHead;
    const mac = storedMac(l.buf, head);
    const seq = head.seq;
    const prev = storedPrev(l.buf, head);
    const rec = parseLine(l.buf, l.start, l.end) ?? {};
    const type = rec.type;

    if (i === 0 && lineNo === 1) {
      // The first line of the log sets the expectations.
      if (type === 'start') {
        if (seq !== 1 || prev !== GENESIS_PREV) throw this.damage(name, 1, 1, 'spliced', `the chain's start header has seq ${seq}`);
      } else if (type !== 'rotate') {
        const moved = this.#headerLater(l.end + 1);
        throw this.damage(
          name,
          1,
          seq - 1,
          moved ? 'reordered' : 'removed',
          `the log begins with a ${String(type)} record (seq ${seq}); its header is ${moved ? 'further down' : 'missing'}`,
        );
      }
      if (rec.file !== name) throw this.damage(name, 1, seq, 'spliced', `${name} holds the header of ${String(rec.file)}`);
      this.chain = String(rec.chain);
      if (this.anchor !== undefined && this.anchor.chain !== this.chain) {
        throw this.damage(name, 1, seq, 'spliced', `the log is chain ${this.chain}, but the trail wrote chain ${this.anchor.chain}`);
      }
      const lost = rec.previousChain as { chain?: unknown; seq?: unknown } | undefined;
      if (type === 'start' && lost !== undefined) {
        throw this.damage(name, 1, seq, 'removed', `the log was started over: chain ${String(lost.chain)} (up to seq ${String(lost.seq)}) is gone`);
      }
      // A rotate header first: retention removed the older files; its prev is the anchor kept for them.
      this.expSeq = seq;
      this.expPrev = prev;
      return mac;
    }

    if (lineNo === 1 && type === 'rotate') {
      // Files before this one, all empty: the log was cut to nothing at its start.
      if (this.chain === undefined) throw this.damage((this.files[0] as ChainFileSource).name, 1, 1, 'truncated', `the log's first file is empty`);
      if (rec.file !== name) throw this.damage(name, 1, this.expSeq, 'spliced', `${name} holds the contents of ${String(rec.file)}`);
      if (rec.chain !== this.chain)
        throw this.damage(name, 1, this.expSeq, 'spliced', `${name} belongs to chain ${String(rec.chain)}, not ${String(this.chain)}`);
      const before = (this.files[i - 1] as ChainFileSource).name;
      if (rec.prevFile !== before) {
        const missing = fileNumber(String(rec.prevFile)) > fileNumber(before);
        throw this.damage(
          name,
          1,
          this.expSeq,
          missing ? 'removed' : 'spliced',
          `${name} follows ${String(rec.prevFile)}, but the file before it is ${before}`,
        );
      }
      if (seq > this.expSeq && !this.#foundLater(i, l.end + 1)) {
        const lines = this.#lineCount(i - 1);
        throw this.damage(before, lines + 1, this.expSeq, 'truncated', `${before} ends at seq ${this.expSeq - 1}, but ${name} continues from seq ${seq - 1}`);
      }
    }

    if (seq === this.expSeq && prev === this.expPrev) {
      // Authentic and in place: check the line is the kind that belongs here.
      if (lineNo === 1 && type !== 'rotate') throw this.damage(name, 1, seq, 'spliced', `${name} does not begin with a rotation header`);
      if (lineNo > 1 && (type === 'rotate' || type === 'start')) {
        throw this.damage(name, lineNo, seq, 'spliced', `a ${type} header in the middle of ${name}: another file was merged into it`);
      }
      if (type === 'repair') {
        const lost = rec.lost as { fromSeq?: unknown; toSeq?: unknown } | null | undefined;
        if (lost !== null && lost !== undefined) {
          throw this.damage(
            name,
            lineNo,
            seq,
            'truncated',
            `the trail found records ${String(lost.fromSeq)}–${String(lost.toSeq)} missing when it reopened the log`,
          );
        }
        this.repairs++;
      }
      if (type === 'entry') this.entries++;
      return mac;
    }
    if (seq === this.expSeq)
      throw this.damage(name, lineNo, this.expSeq, 'spliced', `seq ${seq} does not follow the line before it: it comes from another copy or chain`);
    if (seq < this.expSeq) {
      throw this.damage(name, lineNo, this.expSeq, lineNo === 1 ? 'spliced' : 'duplicated', `seq ${seq} appears again where seq ${this.expSeq} belongs`);
    }
    if (this.#foundLater(i, l.end + 1))
      throw this.damage(name, lineNo, this.expSeq, 'reordered', `seq ${seq} comes before seq ${this.expSeq}, which follows later`);
    throw this.damage(name, lineNo, this.expSeq, 'removed', `seq ${this.expSeq}${seq - 1 > this.expSeq ? `–${seq - 1}` : ''} missing before seq ${seq}`);
  }

  /** Classifies a line whose MAC does not verify. */
  #notAuthentic(i: number, lineNo: number, l: Line): Damage {
    const name = (this.files[i] as ChainFileSource).name;
    const macEnd = l.end - MAC_SUFFIX_BYTES;
    if (macEnd > l.start && l.head !== undefined) {
      const plain = hash('sha256', l.buf.subarray(l.start, macEnd), 'hex');
      if (plain === storedMac(l.buf, l.head)) {
        return this.damage(
          name,
          lineNo,
          this.expSeq,
          'unkeyed',
          `line ${lineNo} carries an unkeyed SHA-256 instead of the chain's HMAC: forged without the key`,
        );
      }
    }
    if (i === 0 && lineNo === 1) {
      // The start header names the key the chain was written under. Another key in it, and the next line
      // not verifying either, is a wrong key rather than tampering (had the header alone been edited, the
      // next line would verify under this key).
      const rec = parseLine(l.buf, l.start, l.end);
      const next = this.#nextLine(i, l.end + 1);
      if (rec?.type === 'start' && typeof rec.keyId === 'string' && rec.keyId !== this.key.id && (next === undefined || !this.#authentic(next))) {
        return this.damage(
          name,
          1,
          1,
          'wrong-key',
          `the log names key ${rec.keyId}, and this trail was opened with key ${this.key.id}: verify with the key file the log was written with; if it fails under that key too, the log was changed`,
        );
      }
    }
    // Not authentic, and the next line chains to the line before it: this one was put in between.
    const next = this.#nextLine(i, l.end + 1);
    if (
      next !== undefined &&
      next.head !== undefined &&
      next.head.seq === this.expSeq &&
      storedPrev(next.buf, next.head) === this.expPrev &&
      this.#authentic(next)
    ) {
      return this.damage(name, lineNo, this.expSeq, 'inserted', `line ${lineNo} does not belong to the chain: the lines around it link to each other`);
    }
    return this.damage(name, lineNo, this.expSeq, 'edited', `line ${lineNo} does not match its MAC: its content was changed`);
  }

  #nextLine(i: number, pos: number): Line | undefined {
    if (pos < this.bytesOf(i).length) return this.#lineAt(i, pos);
    return i + 1 < this.files.length ? this.#lineAt(i + 1, 0) : undefined;
  }

  /** Whether the expected line (seq and prev) appears, authentic, in the rest of this file or the next. */
  #foundLater(i: number, pos: number): boolean {
    for (let f = i; f < Math.min(i + 2, this.files.length); f++) {
      let p = f === i ? pos : 0;
      const buf = this.bytesOf(f);
      while (p < buf.length) {
        const l = this.#lineAt(f, p) as Line;
        if (l.head !== undefined && l.head.seq === this.expSeq && storedPrev(l.buf, l.head) === this.expPrev && this.#authentic(l)) return true;
        p = l.end + 1;
      }
    }
    return false;
  }

  /** Whether an authentic start or rotate header follows in the first file. */
  #headerLater(pos: number): boolean {
    const buf = this.bytesOf(0);
    while (pos < buf.length) {
      const l = this.#lineAt(0, pos) as Line;
      if (this.#authentic(l)) {
        const t = parseLine(l.buf, l.start, l.end)?.type;
        if (t === 'start' || t === 'rotate') return true;
      }
      pos = l.end + 1;
    }
    return false;
  }

  #lineCount(i: number): number {
    const buf = this.bytesOf(i);
    let n = 0;
    for (let p = buf.indexOf(10); p !== -1; p = buf.indexOf(10, p + 1)) n++;
    return n;
  }
}
