/**
 * The byte codecs of stored history: a whole version compressed on its own,
 * and a version as a delta against a neighbour.
 *
 * Deltas use Fossil's delta format (copy ranges of the base, insert new
 * bytes). The common head and tail of the two versions are found with
 * native comparisons and become two copies; the part between is encoded by
 * the `fossil-delta` package, which indexes the base in 16-byte blocks and
 * extends every hash hit both ways, for text and binary alike. A one-line
 * edit of a 200 KB file costs about 50 bytes. zstd with the neighbour as a
 * dictionary (zstd's own "patch-from") was measured beside it and lost on
 * the files history holds: 550–1,300 bytes a one-line edit at levels as
 * fast (its hash tables miss the long matches in repetitive source), 47
 * bytes only at level 19, which takes 100 ms. The package's own
 * `applyDelta` builds its output byte by byte in a JavaScript array (8 ms a
 * step on 200 KB), too slow for a chain of deltas, so {@link applyDelta}
 * here reads the format with typed-array copies (tens of microseconds).
 * Fossil's checksum field is written as 0 and not read: every rebuilt
 * version is checked against its SHA-256 instead.
 *
 * Whole versions are compressed with zstd (node:zlib): level 3 packs source
 * to half of what deflate level 1 did, in less time.
 *
 * @module
 */

import { constants, inflateRawSync, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { createDelta as fossilCreate } from 'fossil-delta';

/** How a stored blob's bytes are to be read. */
export type BlobCodec = 'raw' | 'deflate' | 'zstd' | 'delta' | 'delta-zstd';

/** Whether `codec` stores a delta against a base blob. */
export function isDeltaCodec(codec: string): codec is 'delta' | 'delta-zstd' {
  return codec === 'delta' || codec === 'delta-zstd';
}

// Below this a compressor's header costs more than it saves.
const COMPRESS_MIN = 512;
const ZSTD_LEVEL = { params: { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_checksumFlag]: 0 } };

/** Packs a whole version: zstd when that saves a tenth, else the bytes as they are. */
export function encodeWhole(bytes: Uint8Array): { codec: 'raw' | 'zstd'; content: Uint8Array } {
  if (bytes.byteLength >= COMPRESS_MIN) {
    const packed = zstdCompressSync(bytes, ZSTD_LEVEL);
    if (packed.byteLength < bytes.byteLength * 0.9) return { codec: 'zstd', content: packed };
  }
  return { codec: 'raw', content: bytes };
}

/** Unpacks a whole version (`raw`, `deflate` from stores before deltas, `zstd`). */
export function decodeWhole(codec: string, content: Uint8Array): Uint8Array {
  if (codec === 'raw') return content;
  if (codec === 'zstd') return new Uint8Array(zstdDecompressSync(content));
  if (codec === 'deflate') return new Uint8Array(inflateRawSync(content));
  throw new Error(`unknown blob codec ${codec}`);
}

// Fossil indexes the base in 16-byte blocks.
const BLOCK = 16;
// Most byte comparisons an encoding may cost (see deltaCost).
const MAX_DELTA_WORK = 64 * 1024 * 1024;

/**
 * An upper bound on the byte comparisons Fossil's encoder makes: it tries
 * every indexed base block whose hash matches (up to 250) and extends each
 * match as far as it goes, so a base with many identical blocks (runs of
 * zeros, a repeated record) costs the number of copies of its most repeated
 * block times the target's length — seconds for a few megabytes. Such a base
 * is counted here in one pass over its blocks.
 */
export function deltaCost(base: Uint8Array, target: Uint8Array): number {
  const blocks = Math.floor((base.length - 1) / BLOCK);
  if (blocks <= 0) return target.length;
  const size = 1 << Math.ceil(Math.log2(blocks * 2));
  const keys = new Int32Array(size);
  const counts = new Int32Array(size);
  const view = new DataView(base.buffer, base.byteOffset, base.byteLength);
  let most = 1;
  for (let b = 0; b < blocks; b++) {
    const at = b * BLOCK;
    // Four words of the block mixed into one non-zero key; a collision only overstates the cost.
    let h = Math.imul(view.getInt32(at, true), 0x9e3779b1) ^ view.getInt32(at + 4, true);
    h = Math.imul(h ^ view.getInt32(at + 8, true), 0x85ebca6b) ^ view.getInt32(at + 12, true);
    h = (Math.imul(h ^ (h >>> 15), 0xc2b2ae35) | 1) >>> 0;
    let slot = h & (size - 1);
    for (;;) {
      const k = keys[slot] as number;
      if (k === 0) {
        keys[slot] = h | 0;
        counts[slot] = 1;
        break;
      }
      if (k === (h | 0)) {
        const n = (counts[slot] as number) + 1;
        counts[slot] = n;
        if (n > most) most = n;
        break;
      }
      slot = (slot + 1) & (size - 1);
    }
  }
  return Math.min(most, 250) * target.length;
}

/**
 * The delta that turns `base` into `target`, packed: its inserted bytes are
 * zstd-compressed when that saves a tenth (a version that rewrote much of
 * its neighbour), otherwise stored as they are. `undefined` when making it
 * would cost too much (see {@link deltaCost}): such content is repetitive,
 * and compresses well whole.
 */
export function encodeDelta(base: Uint8Array, target: Uint8Array): { codec: 'delta' | 'delta-zstd'; content: Uint8Array } | undefined {
  const delta = makeDelta(base, target);
  if (delta === undefined) return undefined;
  if (delta.byteLength >= COMPRESS_MIN) {
    const packed = zstdCompressSync(delta, ZSTD_LEVEL);
    if (packed.byteLength < delta.byteLength * 0.9) return { codec: 'delta-zstd', content: packed };
  }
  return { codec: 'delta', content: delta };
}

// Compared a chunk at a time by Buffer.equals (memcmp), then byte by byte inside the chunk that differs.
const CHUNK = 4096;

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + CHUNK <= n && a.subarray(i, i + CHUNK).equals(b.subarray(i, i + CHUNK))) i += CHUNK;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function commonSuffix(a: Buffer, b: Buffer, limit: number): number {
  let i = 0;
  while (i + CHUNK <= limit && a.subarray(a.length - i - CHUNK, a.length - i).equals(b.subarray(b.length - i - CHUNK, b.length - i))) i += CHUNK;
  while (i < limit && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
  return i;
}

// Fossil writes its integers in base 64 with these digits.
const DIGITS = new TextEncoder().encode('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~');
const DIGIT = new Int8Array(128).fill(-1);
for (const [i, c] of DIGITS.entries()) DIGIT[c] = i;

/** Builds a Fossil-format delta from its pieces. */
class DeltaWriter {
  readonly #parts: Uint8Array[] = [];
  #length = 0;

  int(v: number, end: number): void {
    const digits: number[] = [];
    let x = v;
    do {
      digits.push(DIGITS[x % 64] as number);
      x = Math.floor(x / 64);
    } while (x > 0);
    digits.reverse().push(end);
    this.bytes(Uint8Array.from(digits));
  }

  bytes(b: Uint8Array): void {
    this.#parts.push(b);
    this.#length += b.byteLength;
  }

  copy(n: number, from: number): void {
    this.int(n, 0x40);
    this.int(from, 0x2c);
  }

  insert(b: Uint8Array): void {
    this.int(b.byteLength, 0x3a);
    this.bytes(b);
  }

  done(): Uint8Array {
    // Fossil's checksum field is left 0: every rebuilt version is checked against its SHA-256 instead.
    this.int(0, 0x3b);
    return Buffer.concat(this.#parts, this.#length);
  }
}

/**
 * A Fossil-format delta from `base` to `target`. The common head and tail
 * are found first with native comparisons and become two copy commands; only
 * the part between goes to `fossil-delta`, whose encoder runs in
 * JavaScript — so a one-line edit of a 200 KB file costs tens of
 * microseconds, not half a millisecond. `undefined` when the part between
 * would make the encoder too slow (see {@link deltaCost}).
 */
export function makeDelta(base: Uint8Array, target: Uint8Array): Uint8Array | undefined {
  const a = Buffer.from(base.buffer, base.byteOffset, base.byteLength);
  const b = Buffer.from(target.buffer, target.byteOffset, target.byteLength);
  const head = commonPrefix(a, b);
  const tail = commonSuffix(a, b, Math.min(a.length, b.length) - head);
  const midBase = base.subarray(head, base.length - tail);
  const midTarget = target.subarray(head, target.length - tail);
  // At most 250 tries a position: below this size the encoder is fast whatever the content.
  if (midTarget.length * 250 > MAX_DELTA_WORK && deltaCost(midBase, midTarget) > MAX_DELTA_WORK) return undefined;
  const out = new DeltaWriter();
  out.int(target.length, 0x0a);
  if (head > 0) out.copy(head, 0);
  if (midTarget.length > 0 && midBase.length === 0) out.insert(midTarget);
  else if (midTarget.length > 0) reemit(fossilCreate(midBase, midTarget), head, out);
  if (tail > 0) out.copy(tail, base.length - tail);
  return out.done();
}

/** Writes the commands of `delta` (made against a slice of the base starting at `shift`) to `out`, its copies moved by `shift`. */
function reemit(delta: Uint8Array, shift: number, out: DeltaWriter): void {
  const r = new DeltaReader(delta);
  r.int();
  r.expect(0x0a);
  for (;;) {
    const n = r.int();
    const op = r.op();
    if (op === 0x40) {
      const from = r.int();
      r.expect(0x2c);
      out.copy(n, from + shift);
    } else if (op === 0x3a) {
      out.insert(r.take(n));
    } else if (op === 0x3b) {
      return;
    } else {
      throw new Error('delta: unknown command');
    }
  }
}

/** The plain Fossil delta inside a packed one. */
export function unpackDelta(codec: 'delta' | 'delta-zstd', content: Uint8Array): Uint8Array {
  return codec === 'delta-zstd' ? new Uint8Array(zstdDecompressSync(content)) : content;
}

/** The version a packed delta makes of `base`. */
export function decodeDelta(codec: 'delta' | 'delta-zstd', content: Uint8Array, base: Uint8Array): Uint8Array {
  return applyDelta(base, unpackDelta(codec, content));
}

/** The size of the version a Fossil-format delta makes. */
export function deltaTargetSize(delta: Uint8Array): number {
  const r = new DeltaReader(delta);
  const size = r.int();
  r.expect(0x0a);
  return size;
}

/** Reads the integers, commands and bytes of a Fossil-format delta; every read is bounds-checked. */
class DeltaReader {
  readonly #d: Uint8Array;
  pos = 0;

  constructor(delta: Uint8Array) {
    this.#d = delta;
  }

  get more(): boolean {
    return this.pos < this.#d.length;
  }

  int(): number {
    let v = 0;
    const start = this.pos;
    while (this.pos < this.#d.length) {
      const d = DIGIT[(this.#d[this.pos] as number) & 0x7f] as number;
      if (d < 0) break;
      v = v * 64 + d;
      this.pos++;
    }
    if (this.pos === start || this.pos - start > 8) throw new Error('delta: bad integer');
    return v;
  }

  op(): number | undefined {
    return this.#d[this.pos++];
  }

  expect(byte: number): void {
    if (this.#d[this.pos++] !== byte) throw new Error('delta: command not terminated');
  }

  take(n: number): Uint8Array {
    if (this.pos + n > this.#d.length) throw new Error('delta: insert out of range');
    const b = this.#d.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

/**
 * Applies a Fossil-format delta to `base`. Every command is bounds-checked;
 * a malformed delta throws instead of producing wrong bytes. With `scratch`
 * (at least the target's size, and not `base`'s memory) the result is a
 * view of it, so a chain of deltas reuses two buffers instead of allocating
 * a whole version per step.
 */
export function applyDelta(base: Uint8Array, delta: Uint8Array, scratch?: Uint8Array): Uint8Array {
  const r = new DeltaReader(delta);
  const size = r.int();
  r.expect(0x0a);
  const out = scratch !== undefined && scratch.byteLength >= size ? scratch.subarray(0, size) : new Uint8Array(size);
  let at = 0;
  while (r.more) {
    const n = r.int();
    const op = r.op();
    if (op === 0x40 /* @ copy */) {
      const from = r.int();
      r.expect(0x2c);
      if (from + n > base.length || at + n > size) throw new Error('delta: copy out of range');
      out.set(base.subarray(from, from + n), at);
      at += n;
    } else if (op === 0x3a /* : insert */) {
      if (at + n > size) throw new Error('delta: insert out of range');
      out.set(r.take(n), at);
      at += n;
    } else if (op === 0x3b /* ; end, with Fossil's checksum (the caller checks the SHA-256 instead) */) {
      if (at !== size) throw new Error('delta: output size mismatch');
      return out;
    } else {
      throw new Error('delta: unknown command');
    }
  }
  throw new Error('delta: unterminated');
}
