/**
 * Lossless text codecs: decoders that never turn a byte into U+FFFD and
 * encoders that give the same bytes back, so "read a file, write the same
 * text back" is byte-identical even for invalid UTF-8 or a single-byte
 * encoding's undefined bytes.
 *
 * The rule (as Python's `surrogateescape`): a byte that the encoding cannot
 * decode becomes the lone surrogate U+DC80..U+DCFF (the byte plus 0xDC00);
 * the encoder turns such a surrogate back into its byte. Undefined bytes
 * 0x80..0x9F of single-byte encodings decode to the C1 control of the same
 * value instead, as WHATWG's windows-1252 does.
 *
 * The codecs are registered with iconv-lite under `x-ctxfs-lossless-<name>`
 * labels, so every decoder and encoder of core (createDecoder, encodeText)
 * can use them. ISO-2022-JP, which iconv-lite cannot encode, is registered
 * too (decoding through the WHATWG TextDecoder).
 *
 * @module
 */

import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';
import { normalizeEncoding } from './encoding.ts';

const PREFIX = 'x-ctxfs-lossless-';

interface IconvDecoder {
  write(buf: Buffer): string;
  end(): string | undefined;
}
interface IconvEncoder {
  write(str: string): Buffer;
  end(): Buffer | undefined;
}
interface CodecCtor {
  new (): { encoder: new () => IconvEncoder; decoder: new () => IconvDecoder; bomAware?: boolean };
}
type IconvInternals = typeof iconv & { encodings: Record<string, unknown> | null; getCodec(enc: string): unknown };

function register(canonicalName: string, codec: CodecCtor): void {
  const ic = iconv as IconvInternals;
  if (!ic.encodings) ic.getCodec('utf8'); // loads iconv-lite's encoding table lazily
  (ic.encodings as Record<string, unknown>)[canonicalName] = codec;
}

function canonical(label: string): string {
  return label.toLowerCase().replace(/[^0-9a-z]/g, '');
}

// ------------------------------------------------------------------ UTF-8

/** Decodes strict UTF-8; every byte of an invalid sequence becomes U+DC00+byte. */
export function decodeUtf8Lossless(bytes: Uint8Array): string {
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let out = '';
  let run = 0; // start of the current valid run
  const n = bytes.length;
  let i = 0;
  const flush = (end: number) => {
    if (end > run) out += Buffer.from(bytes.buffer, bytes.byteOffset + run, end - run).toString('utf8');
  };
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    const len = validSequenceLength(bytes, i);
    if (len > 0) {
      i += len;
      continue;
    }
    flush(i);
    out += String.fromCharCode(0xdc00 + b);
    i++;
    run = i;
  }
  flush(n);
  return out;
}

/** Length of a valid UTF-8 sequence starting at `i` (0 when invalid or truncated). */
function validSequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i] as number;
  let need: number;
  let min: number;
  let cp: number;
  if (b >= 0xc2 && b <= 0xdf) {
    need = 1;
    min = 0x80;
    cp = b & 0x1f;
  } else if (b >= 0xe0 && b <= 0xef) {
    need = 2;
    min = 0x800;
    cp = b & 0x0f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    need = 3;
    min = 0x10000;
    cp = b & 0x07;
  } else return 0;
  if (i + need >= bytes.length) return 0;
  for (let k = 1; k <= need; k++) {
    const c = bytes[i + k] as number;
    if ((c & 0xc0) !== 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return need + 1;
}

/** Length of an incomplete (but so far valid) sequence at the end of `bytes`. */
function incompleteTail(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = bytes[n - back] as number;
    if ((b & 0xc0) === 0x80) continue; // continuation: keep looking for the lead
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    return need >= back ? back : 0;
  }
  return 0;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Encodes text as UTF-8; U+DC80..U+DCFF become the raw bytes 0x80..0xFF. */
export function encodeUtf8Lossless(text: string): Uint8Array {
  if (!SURROGATE.test(text)) return Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    if (c >= 0xdc80 && c <= 0xdcff) {
      out.push(Buffer.from(text.slice(run, i), 'utf8'));
      out.push(Buffer.from([c - 0xdc00]));
      run = i + 1;
    }
  }
  out.push(Buffer.from(text.slice(run), 'utf8'));
  return Buffer.concat(out);
}

class Utf8LosslessDecoder implements IconvDecoder {
  #pending: Uint8Array = new Uint8Array(0);
  write(buf: Buffer): string {
    const data = this.#pending.length === 0 ? buf : Buffer.concat([this.#pending, buf]);
    const tail = incompleteTail(data);
    this.#pending = Uint8Array.prototype.slice.call(data, data.length - tail);
    return decodeUtf8Lossless(data.subarray(0, data.length - tail));
  }
  end(): string {
    const rest = this.#pending;
    this.#pending = new Uint8Array(0);
    return rest.length === 0 ? '' : decodeUtf8Lossless(rest);
  }
}

class Utf8LosslessEncoder implements IconvEncoder {
  #high = '';
  write(str: string): Buffer {
    // A surrogate pair split across writes is joined before encoding.
    let s = this.#high + str;
    this.#high = '';
    const last = s.charCodeAt(s.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.#high = s.slice(-1);
      s = s.slice(0, -1);
    }
    const bytes = encodeUtf8Lossless(s);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  end(): Buffer | undefined {
    if (this.#high === '') return undefined;
    const b = Buffer.from(encodeUtf8Lossless(this.#high));
    this.#high = '';
    return b;
  }
}

function Utf8Lossless(this: { encoder: unknown; decoder: unknown }) {}
Utf8Lossless.prototype.encoder = Utf8LosslessEncoder;
Utf8Lossless.prototype.decoder = Utf8LosslessDecoder;

// ------------------------------------------------------------------ single-byte

interface SbcsTables {
  decode: string[]; // byte -> char
  encode: Map<number, number>; // char code -> byte
}

const sbcsCache = new Map<string, SbcsTables | null>();

function sbcsTables(encoding: string): SbcsTables | null {
  const cached = sbcsCache.get(encoding);
  if (cached !== undefined) return cached;
  let result: SbcsTables | null = null;
  try {
    const all = Buffer.alloc(256);
    for (let i = 0; i < 256; i++) all[i] = i;
    const text = iconv.decode(all, encoding);
    if (text.length === 256) {
      const decode: string[] = [];
      const encode = new Map<number, number>();
      for (let b = 0; b < 256; b++) {
        let ch = text.charCodeAt(b);
        // Undefined bytes, and duplicates that would not round-trip, get the escape.
        if (ch === 0xfffd || encode.has(ch)) ch = b >= 0x80 && b <= 0x9f && !encode.has(b) ? b : 0xdc00 + b;
        decode.push(String.fromCharCode(ch));
        encode.set(ch, b);
      }
      result = { decode, encode };
    }
  } catch {
    result = null;
  }
  sbcsCache.set(encoding, result);
  return result;
}

function makeSbcsCodec(encoding: string, tables: SbcsTables): CodecCtor {
  class Decoder implements IconvDecoder {
    write(buf: Buffer): string {
      let s = '';
      for (let i = 0; i < buf.length; i++) s += tables.decode[buf[i] as number];
      return s;
    }
    end(): undefined {
      return undefined;
    }
  }
  class Encoder implements IconvEncoder {
    write(str: string): Buffer {
      const out = Buffer.alloc(str.length * 4);
      let n = 0;
      for (let i = 0; i < str.length; i++) {
        const c = str.charCodeAt(i);
        const b = tables.encode.get(c);
        if (b !== undefined) {
          out[n++] = b;
          continue;
        }
        if (c >= 0xdc80 && c <= 0xdcff) {
          out[n++] = c - 0xdc00;
          continue;
        }
        // Not representable: whatever iconv-lite substitutes.
        const pairLen = c >= 0xd800 && c <= 0xdbff && i + 1 < str.length ? 2 : 1;
        const sub = iconv.encode(str.slice(i, i + pairLen), encoding);
        sub.copy(out, n);
        n += sub.length;
        i += pairLen - 1;
      }
      return out.subarray(0, n);
    }
    end(): undefined {
      return undefined;
    }
  }
  function Codec(this: unknown) {}
  Codec.prototype.encoder = Encoder;
  Codec.prototype.decoder = Decoder;
  return Codec as unknown as CodecCtor;
}

// ------------------------------------------------------------------ ISO-2022-JP

class Iso2022JpEncoder implements IconvEncoder {
  #jis = false;
  write(str: string): Buffer {
    const out: number[] = [];
    for (const ch of str) {
      const cp = ch.codePointAt(0) as number;
      if (cp < 0x80) {
        if (this.#jis) {
          out.push(0x1b, 0x28, 0x42);
          this.#jis = false;
        }
        out.push(cp);
        continue;
      }
      const euc = iconv.encode(ch, 'euc-jp');
      if (euc.length === 2 && (euc[0] as number) >= 0xa1 && (euc[1] as number) >= 0xa1) {
        if (!this.#jis) {
          out.push(0x1b, 0x24, 0x42);
          this.#jis = true;
        }
        out.push((euc[0] as number) & 0x7f, (euc[1] as number) & 0x7f);
        continue;
      }
      if (this.#jis) {
        out.push(0x1b, 0x28, 0x42);
        this.#jis = false;
      }
      out.push(0x3f); // '?': not representable in ISO-2022-JP
    }
    return Buffer.from(out);
  }
  end(): Buffer | undefined {
    if (!this.#jis) return undefined;
    this.#jis = false;
    return Buffer.from([0x1b, 0x28, 0x42]);
  }
}

class Iso2022JpDecoder implements IconvDecoder {
  readonly #td = new TextDecoder('iso-2022-jp');
  write(buf: Buffer): string {
    return this.#td.decode(buf, { stream: true });
  }
  end(): string {
    return this.#td.decode();
  }
}

function Iso2022Jp(this: unknown) {}
Iso2022Jp.prototype.encoder = Iso2022JpEncoder;
Iso2022Jp.prototype.decoder = Iso2022JpDecoder;

// ------------------------------------------------------------------ registry

let registered = false;
function registerFixed(): void {
  if (registered) return;
  registered = true;
  register(canonical(`${PREFIX}utf-8`), Utf8Lossless as unknown as CodecCtor);
  if (!iconv.encodingExists('iso-2022-jp')) register('iso2022jp', Iso2022Jp as unknown as CodecCtor);
}

const MULTI_BYTE = new Set(['utf-16le', 'utf-16be', 'utf-32le', 'utf-32be', 'utf-16', 'utf-32', 'utf-7']);

/**
 * The codec label to decode and encode `encoding` losslessly: the
 * `x-ctxfs-lossless-*` variant for UTF-8 and single-byte encodings, the
 * encoding itself for the rest (multi-byte legacy encodings round-trip
 * through iconv-lite for valid text).
 *
 * @example
 * ```ts
 * const label = losslessCodec('windows-1252');   // 'x-ctxfs-lossless-windows-1252'
 * encodeText(decodeAll(bytes, label), label);     // the same bytes, undefined ones included
 * ```
 */
export function losslessCodec(encoding: string): string {
  registerFixed();
  const enc = normalizeEncoding(encoding);
  if (enc.startsWith(PREFIX)) return enc;
  if (enc === 'utf-8') return `${PREFIX}utf-8`;
  if (MULTI_BYTE.has(enc)) return enc;
  if (!iconv.encodingExists(enc)) return enc;
  const tables = sbcsTables(enc);
  if (tables === null) return enc;
  const label = `${PREFIX}${enc}`;
  const name = canonical(label);
  const ic = iconv as IconvInternals;
  if (!ic.encodings || !(name in ic.encodings)) register(name, makeSbcsCodec(enc, tables));
  return label;
}

/** The plain encoding behind a lossless label (`x-ctxfs-lossless-utf-8` → `utf-8`). */
export function plainEncoding(label: string): string {
  const enc = normalizeEncoding(label);
  return enc.startsWith(PREFIX) ? enc.slice(PREFIX.length) : enc;
}

/** Makes ISO-2022-JP encodable through iconv-lite (idempotent). */
export function registerLosslessCodecs(): void {
  registerFixed();
}
