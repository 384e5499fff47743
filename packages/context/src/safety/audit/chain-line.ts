/**
 * The byte layout of a chain line, shared by the writer and the verifier.
 *
 * ```
 * {"seq":42,"prev":"<64 hex>","ts":"2026-11-25T20:15:28.123Z","type":"entry", … ,"mac":"<64 hex>"}\n
 * └──────────────────────────── MAC input ───────────────────────────────────┘└──── 74 bytes ────┘
 * ```
 *
 * The MAC covers every byte of the line before `,"mac":"`; `prev` (the MAC
 * of the line before) is inside that range, which is what chains the lines.
 * `seq`, `prev` and `type` sit at fixed places so the verifier reads them
 * from the bytes without parsing JSON; anything off that layout is damage.
 *
 * @module
 */

import type { ChainKey } from './chain-key.ts';

/** The MAC of "nothing before": the `prev` of a chain's first line. */
export const GENESIS_PREV = '0'.repeat(64);
/** Bytes after the MAC input: `,"mac":"` + 64 hex digits + `"}`. */
export const MAC_SUFFIX_BYTES = 74;

/** How every line begins, before its seq. */
export const SEQ_HEAD = Buffer.from('{"seq":');
/** Between seq and prev. */
export const PREV_HEAD = Buffer.from(',"prev":"');
/** Between prev and the timestamp. */
export const TS_HEAD = Buffer.from('","ts":"');
const TYPE_HEAD = Buffer.from('","type":"');
/** What precedes the MAC at the end of a line. */
export const MAC_HEAD = Buffer.from(',"mac":"');
/** The type field of an entry, as it follows the timestamp. */
export const ENTRY_TYPE = Buffer.from('","type":"entry",');
/** Characters of a timestamp (`toISOString()` of years 0–9999). */
export const TS_CHARS = 24;

/** Record types: entries, and the chain's own bookkeeping lines. */
export type LineType = 'entry' | 'start' | 'rotate' | 'repair';

/** A line written, with its MAC. */
export interface SealedLine {
  readonly bytes: Buffer;
  readonly mac: string;
}

/**
 * Serializes `body` (whose first keys are `seq`, `prev`, `ts`, `type`), MACs
 * it and returns the whole line with its newline.
 */
export function sealLine(body: Record<string, unknown>, key: ChainKey): SealedLine {
  return sealHead(JSON.stringify(body).slice(0, -1), key); // without the closing brace
}

/**
 * The line whose fields after `type` are `fieldsJson`, a non-empty JSON
 * object serialized already (by the thread that handed it over): the same
 * bytes {@link sealLine} makes of `{ seq, prev, ts, type, ...fields }`,
 * without parsing or serializing the fields again.
 */
export function sealFieldsJson(seq: number, prev: string, ts: string, type: LineType, fieldsJson: string, key: ChainKey): SealedLine {
  // `prev` is hex, `ts` an ISO time and `type` a word: JSON writes each as it is, quoted.
  return sealHead(`{"seq":${seq},"prev":"${prev}","ts":"${ts}","type":"${type}",${fieldsJson.slice(1, -1)}`, key);
}

/** The line whose MAC input is `head` (a JSON object without its closing brace). */
function sealHead(head: string, key: ChainKey): SealedLine {
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(head) + MAC_SUFFIX_BYTES + 1);
  const n = bytes.write(head, 0, 'utf8');
  const mac = key.macHex(bytes, 0, n);
  MAC_HEAD.copy(bytes, n);
  bytes.write(mac, n + MAC_HEAD.length, 'latin1');
  bytes.write('"}\n', n + MAC_HEAD.length + 64, 'latin1');
  return { bytes, mac };
}

/** What the verifier reads of a line without parsing it. */
export interface LineHead {
  seq: number;
  /** Offset of the 64 hex digits of `prev`. */
  prevAt: number;
  /** Offset of the type's first character. */
  typeAt: number;
  /** End of the MAC input (start of `,"mac":"`). */
  macInputEnd: number;
}

function matchAt(buf: Buffer, at: number, what: Buffer): boolean {
  if (at + what.length > buf.length) return false;
  for (let i = 0; i < what.length; i++) if (buf[at + i] !== what[i]) return false;
  return true;
}

function isHex(buf: Buffer, at: number, n: number): boolean {
  for (let i = at; i < at + n; i++) {
    const c = buf[i] ?? 0;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/**
 * Reads the fixed parts of the line `buf[start, end)` (no newline): its seq,
 * where `prev`, the type and the MAC are. `undefined` when the line does not
 * have the layout, which no line the writer produced lacks.
 */
export function readLineHead(buf: Buffer, start: number, end: number): LineHead | undefined {
  if (end - start < 120 || !matchAt(buf, start, SEQ_HEAD)) return undefined;
  let at = start + SEQ_HEAD.length;
  let seq = 0;
  const digits = at;
  while (at < end) {
    const c = buf[at] ?? 0;
    if (c < 0x30 || c > 0x39) break;
    seq = seq * 10 + (c - 0x30);
    at++;
  }
  // No leading zeros, at most 15 digits: one spelling per number, exact in a double.
  if (at === digits || at - digits > 15 || (buf[digits] === 0x30 && at - digits > 1)) return undefined;
  if (!matchAt(buf, at, PREV_HEAD)) return undefined;
  const prevAt = at + PREV_HEAD.length;
  if (!isHex(buf, prevAt, 64)) return undefined;
  at = prevAt + 64;
  if (!matchAt(buf, at, TS_HEAD)) return undefined;
  at += TS_HEAD.length + TS_CHARS;
  if (!matchAt(buf, at, TYPE_HEAD)) return undefined;
  const typeAt = at + TYPE_HEAD.length;
  const macInputEnd = end - MAC_SUFFIX_BYTES;
  if (macInputEnd <= typeAt || !matchAt(buf, macInputEnd, MAC_HEAD) || !isHex(buf, macInputEnd + MAC_HEAD.length, 64)) return undefined;
  if (buf[end - 2] !== 0x22 || buf[end - 1] !== 0x7d) return undefined; // '"}'
  return { seq, prevAt, typeAt, macInputEnd };
}

/** The MAC written on a line whose head was read. */
export function storedMac(buf: Buffer, head: LineHead): string {
  return buf.toString('latin1', head.macInputEnd + MAC_HEAD.length, head.macInputEnd + MAC_HEAD.length + 64);
}

/** The `prev` written on a line whose head was read. */
export function storedPrev(buf: Buffer, head: LineHead): string {
  return buf.toString('latin1', head.prevAt, head.prevAt + 64);
}

/** Parses a line as JSON (the slow path: headers, damaged lines, query results). */
export function parseLine(buf: Buffer, start: number, end: number): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(buf.toString('utf8', start, end));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the line's type starts with `e` (an entry): the verifier's cheap test before parsing. */
export function isEntryType(buf: Buffer, head: LineHead): boolean {
  return buf[head.typeAt] === 0x65 && buf[head.typeAt + 5] === 0x22; // 'entry"'
}
