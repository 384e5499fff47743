/**
 * Byte-exact text round trips. Text reads decode as the WHATWG decoders do
 * (an invalid UTF-8 sequence reads as U+FFFD, windows-1252's undefined bytes
 * as the C1 controls of the same value). This module makes the way back
 * exact:
 *
 * - {@link encodeTextExact} encodes with the inverse of the decoder that read
 *   the text: single-byte encodings through a table built from that decoder
 *   (so U+0081 goes back to 0x81 in windows-1252, where iconv-lite would
 *   write `?`), ISO-2022-JP (which iconv-lite cannot encode) with escape
 *   sequences as `iconv` writes them, everything else through iconv-lite.
 * - With the file's previous bytes, lines the text leaves as they were are
 *   written as their old bytes (whatever the encoder would make of them),
 *   and every U+FFFD that stands for an invalid sequence of the old file is
 *   written back as that sequence, never as the bytes of U+FFFD: replacement
 *   characters are matched to the old ones through the text's unchanged
 *   prefix and suffix, and in order in the edited middle.
 *
 * @module
 */

import { concatBytes } from './bytes.ts';
import { isValidUtf8, normalizeEncoding } from './encoding.ts';
import { iconvLite } from './lazy-dependencies.ts';

const decoders = new Map<string, InstanceType<typeof TextDecoder> | null>();

/** One decoder per label: a whole-buffer decode keeps no state between calls. */
function textDecoderFor(label: string): InstanceType<typeof TextDecoder> | undefined {
  let td = decoders.get(label);
  if (td === undefined) {
    try {
      td = new TextDecoder(label, { ignoreBOM: true });
    } catch {
      td = null;
    }
    decoders.set(label, td);
  }
  return td ?? undefined;
}

/** Decodes `bytes` exactly as core's text readers do (WHATWG decoder first, iconv-lite otherwise). */
export function decodeLikeReader(bytes: Uint8Array, encoding: string): string {
  const label = normalizeEncoding(encoding);
  const td = textDecoderFor(label);
  if (td) return td.decode(bytes);
  return iconvLite().decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), label, { stripBOM: false });
}

// ------------------------------------------------------------------ single-byte tables

interface SbcsTable {
  /** byte → char as the reader decodes it. */
  readonly chars: string;
  /** char code → byte (defined bytes only). */
  readonly bytes: Map<number, number>;
}

const sbcsCache = new Map<string, SbcsTable | null>();

/** The reader's table of a single-byte encoding, or null for multi-byte ones. */
function sbcsTable(encoding: string): SbcsTable | null {
  const cached = sbcsCache.get(encoding);
  if (cached !== undefined) return cached;
  let table: SbcsTable | null = null;
  if (!/^utf-|^utf$/.test(encoding)) {
    try {
      const all = new Uint8Array(256);
      for (let i = 0; i < 256; i++) all[i] = i;
      const chars = decodeLikeReader(all, encoding);
      if (chars.length === 256) {
        const bytes = new Map<number, number>();
        for (let b = 255; b >= 0; b--) {
          const c = chars.charCodeAt(b);
          if (c !== 0xfffd) bytes.set(c, b); // lowest byte wins for duplicates
        }
        table = { chars, bytes };
      }
    } catch {
      table = null;
    }
  }
  sbcsCache.set(encoding, table);
  return table;
}

// ------------------------------------------------------------------ ISO-2022-JP

/** Encodes ISO-2022-JP: ASCII, and JIS X 0208 between `ESC $ B` and `ESC ( B`, as glibc's iconv does. */
export function encodeIso2022Jp(text: string): Uint8Array {
  const out: number[] = [];
  let jis = false;
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x80) {
      if (jis) {
        out.push(0x1b, 0x28, 0x42);
        jis = false;
      }
      out.push(cp);
      continue;
    }
    const euc = iconvLite().encode(ch, 'euc-jp');
    if (euc.length === 2 && (euc[0] as number) >= 0xa1 && (euc[1] as number) >= 0xa1) {
      if (!jis) {
        out.push(0x1b, 0x24, 0x42);
        jis = true;
      }
      out.push((euc[0] as number) & 0x7f, (euc[1] as number) & 0x7f);
      continue;
    }
    if (jis) {
      out.push(0x1b, 0x28, 0x42);
      jis = false;
    }
    out.push(0x3f); // not representable in ISO-2022-JP
  }
  if (jis) out.push(0x1b, 0x28, 0x42);
  return Uint8Array.from(out);
}

// ------------------------------------------------------------------ GBK

/** Labels the GBK writer serves: the WHATWG decoder reads all of them as GBK. */
const GBK_WRITTEN = new Set(['gbk', 'gb2312', 'x-gbk']);

/** GBK's two-byte codes by character, as the reader decodes them (lowest code wins); built on first use. */
let gbkCodes: Map<number, number> | undefined;

function gbkTable(): Map<number, number> {
  if (gbkCodes !== undefined) return gbkCodes;
  const pairs: number[] = [];
  for (let lead = 0x81; lead <= 0xfe; lead++) {
    for (let trail = 0x40; trail <= 0xfe; trail++) if (trail !== 0x7f) pairs.push(lead, trail);
  }
  // Every lead and trail of these ranges makes one BMP character, so the decoded text lines up with the pairs.
  const chars = decodeLikeReader(Uint8Array.from(pairs), 'gbk');
  const codes = new Map<number, number>();
  for (let i = 0; i < chars.length; i++) {
    const c = chars.charCodeAt(i);
    if (c !== 0xfffd && !codes.has(c)) codes.set(c, ((pairs[2 * i] as number) << 8) | (pairs[2 * i + 1] as number));
  }
  gbkCodes = codes;
  return codes;
}

/**
 * Encodes GBK strictly: ASCII, U+20AC as 0x80, and the two-byte codes the
 * reader decodes; anything else is `?`. Never GB18030's four-byte forms, which
 * a GBK file cannot hold (iconv-lite's GB18030 writes them), and the 18
 * characters iconv-lite's own GBK table lacks (U+FE10…, U+9FB4…) as the
 * codes they were read from.
 */
function encodeGbk(text: string): Uint8Array {
  const codes = gbkTable();
  const out = new Uint8Array(text.length * 2);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const code = c < 0x80 ? c : c === 0x20ac ? 0x80 : codes.get(c);
    if (code === undefined) {
      out[n++] = 0x3f;
      // Both halves of a pair stand for one character: one '?'.
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++;
    } else if (code > 0xff) {
      out[n++] = code >> 8;
      out[n++] = code & 0xff;
    } else out[n++] = code;
  }
  return out.slice(0, n);
}

// ------------------------------------------------------------------ plain encoding

function encodeSbcs(text: string, table: SbcsTable, encoding: string): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const b = table.bytes.get(c);
    if (b !== undefined) {
      out[n++] = b;
      continue;
    }
    const len = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
    const sub = iconvLite().encodingExists(encoding) ? iconvLite().encode(text.slice(i, i + len), encoding) : Buffer.from('?');
    for (const x of sub) {
      if (n >= out.length) break;
      out[n++] = x;
    }
    i += len - 1;
  }
  return out.slice(0, n);
}

function encodePlain(text: string, encoding: string): Uint8Array {
  if (encoding === 'utf-8') return new TextEncoder().encode(text);
  if (encoding === 'iso-2022-jp') return encodeIso2022Jp(text);
  if (GBK_WRITTEN.has(encoding)) return encodeGbk(text);
  const table = sbcsTable(encoding);
  if (table) return encodeSbcs(text, table, encoding);
  if (!iconvLite().encodingExists(encoding)) throw new RangeError(`unknown encoding '${encoding}'`);
  return iconvLite().encode(text, encoding);
}

/** Encodings that hold every Unicode character: nothing to check. */
const WHOLE_UNICODE = new Set(['utf-8', 'utf-16le', 'utf-16be', 'utf-32le', 'utf-32be', 'gb18030']);

/** Per encoding, whether each character checked so far survives an encode and decode. */
const representable = new Map<string, Map<string, boolean>>();

/** Half of a UTF-16 pair with no other half: a string can hold one, no encoding can. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether `char` (one code point of a string) is half of a UTF-16 pair standing alone. */
export function isLoneSurrogate(char: string): boolean {
  return char.length === 1 && LONE_SURROGATE.test(char);
}

/**
 * The first character of `text` that `encoding` cannot hold — encoding it
 * would write a `?`, U+FFFD or another character in its place — or
 * `undefined` when every one round-trips. A lone surrogate (half of a UTF-16
 * pair, see {@link isLoneSurrogate}) is one in every encoding, UTF-8 too.
 * U+FFFD is left alone: in a decoded text it stands for bytes that were
 * invalid, which an exact encode writes back.
 *
 * @example
 * ```ts
 * firstUnencodable('привет ✅', 'koi8-r'); // { index: 7, char: '✅' }
 * firstUnencodable('привет', 'koi8-r');    // undefined
 * firstUnencodable('a \ud83d', 'utf-8');  // { index: 2, char: '\ud83d' }
 * ```
 */
export function firstUnencodable(text: string, encoding: string): { index: number; char: string } | undefined {
  const label = normalizeEncoding(encoding);
  // isWellFormed answers "no lone surrogate" several times faster than the regex walks a whole text (an edit checks each new text).
  const lone = text.isWellFormed() ? null : LONE_SURROGATE.exec(text);
  if (WHOLE_UNICODE.has(label)) return lone === null ? undefined : { index: lone.index, char: lone[0] };
  let known = representable.get(label);
  if (known === undefined) {
    known = new Map();
    representable.set(label, known);
  }
  let index = 0;
  for (const char of text) {
    if (char.charCodeAt(0) >= 0x80 && char !== '\uFFFD') {
      let ok = known.get(char);
      if (ok === undefined) {
        ok = decodeLikeReader(encodePlain(char, label), label) === char;
        known.set(char, ok);
      }
      if (!ok) return { index, char };
    }
    index += char.length;
  }
  return undefined;
}

/**
 * The refusal of `text` for `encoding`, as a sentence a model or a person
 * can act on, or `undefined` when the encoding holds every character. It
 * names the first character the encoding lacks, its code point and its
 * line in the text, says nothing was written, and what to send instead. A
 * lone surrogate is named as half of a character, which no encoding holds;
 * for another character, `target` says where the text was going: into a
 * file `stored` in that encoding (convert the file first) or written in an
 * encoding the caller `chose` (write UTF-8 instead).
 *
 * @example
 * ```ts
 * unencodableText('a.txt', 'Привет\n日本', 'koi8-r', 'stored');
 * // 'a.txt is stored as koi8-r, which has no "日" (U+65E5, line 2 of the new text): …'
 * unencodableText('a.txt', 'x \ud83d', 'utf-8', 'chose');
 * // 'The new text holds U+D83D (line 1), half of a character\'s UTF-16 pair …'
 * ```
 */
export function unencodableText(path: string, text: string, encoding: string, target: 'stored' | 'chose'): string | undefined {
  const bad = firstUnencodable(text, encoding);
  if (bad === undefined) return undefined;
  const line = text.slice(0, bad.index).split('\n').length;
  const code = `U+${(bad.char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  if (isLoneSurrogate(bad.char)) {
    return `The new text holds ${code} (line ${line}), half of a character's UTF-16 pair without the other half: no encoding holds one, and written it would turn into U+FFFD. Nothing was written. Send the whole character (both halves of the pair), or leave it out.`;
  }
  const where = target === 'stored' ? `${path} is stored as ${encoding}` : `${path} is to be written as ${encoding}`;
  const instead = target === 'stored' ? 'or ask the user to convert the file to UTF-8 first' : 'or write it as UTF-8';
  return `${where}, which has no ${JSON.stringify(bad.char)} (${code}, line ${line} of the new text): written, it would turn into another character. Nothing was written. Use characters ${encoding} has (an ASCII spelling, or the word in the file's own script), ${instead}.`;
}

// ------------------------------------------------------------------ invalid sequences

/** One U+FFFD of a decoded text that stands for invalid bytes. */
export interface DecodeError {
  /** UTF-16 index of the U+FFFD in the decoded text. */
  readonly index: number;
  /** The bytes the decoder replaced. */
  readonly bytes: Uint8Array;
}

/** WHATWG UTF-8 decoding, recording the bytes behind each U+FFFD it emits. */
function utf8Errors(bytes: Uint8Array): { text: string; errors: DecodeError[] } {
  const errors: DecodeError[] = [];
  let text = '';
  let runStart = 0;
  const td = new TextDecoder();
  const flush = (end: number) => {
    if (end > runStart) text += td.decode(bytes.subarray(runStart, end));
  };
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need = 0;
    let lower = 0x80;
    let upper = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lower = 0xa0;
      if (b === 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lower = 0x90;
      if (b === 0xf4) upper = 0x8f;
    }
    if (need === 0) {
      flush(i);
      errors.push({ index: text.length, bytes: bytes.slice(i, i + 1) });
      text += '\ufffd';
      i++;
      runStart = i;
      continue;
    }
    let k = 1;
    let ok = true;
    for (; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < lower || c > upper) {
        ok = false;
        break;
      }
      lower = 0x80;
      upper = 0xbf;
    }
    if (ok) {
      i += need + 1;
      continue;
    }
    // The maximal valid prefix is replaced by one U+FFFD; the offending byte is read again.
    flush(i);
    errors.push({ index: text.length, bytes: bytes.slice(i, i + k) });
    text += '\ufffd';
    i += k;
    runStart = i;
  }
  flush(n);
  return { text, errors };
}

/**
 * The text a reader sees for `bytes` (without BOM) and, for UTF-8 and
 * single-byte encodings, the bytes behind each U+FFFD it contains.
 */
export function decodeWithErrors(bytes: Uint8Array, encoding: string): { text: string; errors: DecodeError[] } {
  const label = normalizeEncoding(encoding);
  if (label === 'utf-8') return utf8Errors(bytes);
  const table = sbcsTable(label);
  if (table) {
    const errors: DecodeError[] = [];
    let text = '';
    for (let i = 0; i < bytes.length; i++) {
      const ch = table.chars[bytes[i] as number] as string;
      if (ch === '\ufffd') errors.push({ index: text.length, bytes: bytes.slice(i, i + 1) });
      text += ch;
    }
    return { text, errors };
  }
  return { text: decodeLikeReader(bytes, label), errors: [] };
}

/** Encodes `text`, writing each U+FFFD that stood for invalid bytes of `previous` back as those bytes. */
function encodeRestoringInvalid(text: string, label: string, previous: Uint8Array): Uint8Array {
  if (!text.includes('\ufffd')) return encodePlain(text, label);
  const old = decodeWithErrors(previous, label);
  if (old.errors.length === 0) return encodePlain(text, label);
  const errAt = new Map<number, Uint8Array>();
  for (const e of old.errors) errAt.set(e.index, e.bytes);
  const d = old.text;
  let p = 0;
  const max = Math.min(text.length, d.length);
  while (p < max && text.charCodeAt(p) === d.charCodeAt(p)) p++;
  let s = 0;
  while (s < max - p && text.charCodeAt(text.length - 1 - s) === d.charCodeAt(d.length - 1 - s)) s++;
  const middle = old.errors.filter((e) => e.index >= p && e.index < d.length - s);
  let nextMiddle = 0;
  const parts: Uint8Array[] = [];
  let from = 0;
  for (let i = text.indexOf('\ufffd'); i >= 0; i = text.indexOf('\ufffd', i + 1)) {
    let bytes: Uint8Array | undefined;
    if (i < p) bytes = errAt.get(i);
    else if (i >= text.length - s) bytes = errAt.get(i - text.length + d.length);
    else if (nextMiddle < middle.length) bytes = (middle[nextMiddle++] as DecodeError).bytes;
    if (bytes === undefined) continue; // a replacement character the caller wrote on purpose
    parts.push(encodePlain(text.slice(from, i), label), bytes);
    from = i + 1;
  }
  parts.push(encodePlain(text.slice(from), label));
  return concatBytes(parts);
}

/** Lines of `bytes`, each with its `\n`; splitting there is safe in every ASCII-compatible encoding (no trail byte is 0x0A). */
function byteLines(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) {
    out.push(bytes.subarray(start, i + 1));
    start = i + 1;
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

/** Lines of `text`, each with its `\n`. */
function textLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * Encodings whose lines decode on their own: ASCII-compatible and
 * stateless (not UTF-16/32, not ISO-2022-JP with its shift state).
 */
function lineSafe(label: string): boolean {
  return !/^utf-(16|32)/.test(label) && !label.startsWith('iso-2022');
}

/**
 * Encodes `text` in `encoding` so that text read from a file goes back to
 * the same bytes. Pass the file's previous content (without BOM) as
 * `previous`: lines the text leaves unchanged are written as their old
 * bytes, so an encoding whose decoder and encoder disagree on a character
 * (Big5's duplicates, a vendor extension) still round-trips exactly, and
 * invalid sequences go back as the bytes they were, never as U+FFFD.
 *
 * @example
 * ```ts
 * const old = Uint8Array.from([0x61, 0xff, 0x62]);           // 'a', invalid byte, 'b'
 * const text = new TextDecoder().decode(old);                // 'a\uFFFDb'
 * encodeTextExact(text + '!', 'utf-8', old);                 // 61 ff 62 21: the 0xff is kept
 * ```
 */
export function encodeTextExact(text: string, encoding: string, previous?: Uint8Array): Uint8Array {
  const label = normalizeEncoding(encoding);
  if (previous === undefined) return encodePlain(text, label);
  // Valid UTF-8 decodes and encodes back byte for byte: no old bytes to restore.
  if (label === 'utf-8' && isValidUtf8(previous)) return encodePlain(text, label);
  if (!lineSafe(label)) return encodeRestoringInvalid(text, label, previous);
  const oldBytes = byteLines(previous);
  const oldText = oldBytes.map((b) => decodeLikeReader(b, label));
  const lines = textLines(text);
  let p = 0;
  while (p < lines.length && p < oldText.length && lines[p] === oldText[p]) p++;
  let s = 0;
  while (s < lines.length - p && s < oldText.length - p && lines[lines.length - 1 - s] === oldText[oldText.length - 1 - s]) s++;
  const middleOld = concatBytes(oldBytes.slice(p, oldBytes.length - s));
  const middle = encodeRestoringInvalid(lines.slice(p, lines.length - s).join(''), label, middleOld);
  return concatBytes([...oldBytes.slice(0, p), middle, ...oldBytes.slice(oldBytes.length - s)]);
}
