/**
 * The byte codecs of stored history: a whole version compressed on its own,
 * and a version as a delta against a neighbour.
 *
 * Deltas are in Fossil's delta format (copy ranges of the base, insert new
 * bytes), for text and binary alike. The common head and tail of the two
 * versions are found with native comparisons and become two copies; the
 * part between is encoded as git's and Fossil's encoders do (a rolling hash
 * over 16-byte blocks of the base, hits extended both ways), with a bound
 * on the work. A one-line edit of a 200 KB file costs about 50 bytes and a
 * few tens of microseconds. Measured and set aside: zstd with the neighbour
 * as a dictionary (zstd's "patch-from"; 550–1,300 bytes a one-line edit at
 * levels as fast, 47 bytes only at level 19, which takes 100 ms), and the
 * `fossil-delta` package, whose encoder tries up to 250 base blocks a byte
 * and extends each as far as it goes (seconds on a few megabytes with long
 * repeated runs; guarding against that rejected most versions of a real
 * 660 KB C++ file) and whose decoder builds its output byte by byte in a
 * JavaScript array (8 ms a step on 200 KB). It stays in the tests, as an
 * independent reader of the format. Fossil's checksum field is written as 0
 * and not read: every rebuilt version is checked against its SHA-256.
 *
 * Whole versions are compressed with zstd (node:zlib): level 3 packs source
 * to half of what deflate level 1 did, in less time.
 *
 * @module
 */

/** How a stored blob's bytes are to be read. */
export type BlobCodec = 'raw' | 'deflate' | 'zstd' | 'delta' | 'delta-zstd';

/** Whether `codec` stores a delta against a base blob. */
export function isDeltaCodec(codec: string): codec is 'delta' | 'delta-zstd' {
  return codec === 'delta' || codec === 'delta-zstd';
}

// Below this a compressor's header costs more than it saves.
const COMPRESS_MIN = 512;
/** zlib, loaded when history first packs or unpacks content: a read-only command never does. */
const zlib = (): typeof import('node:zlib') => process.getBuiltinModule('node:zlib');
/** zstd at level 3, without the frame checksum (the stored digest already checks the content). */
const zstdLevel = () => {
  const { constants } = zlib();
  return { params: { [constants.ZSTD_c_compressionLevel]: 3, [constants.ZSTD_c_checksumFlag]: 0 } };
};

/** Packs a whole version: zstd when that saves a tenth, else the bytes as they are. */
export function encodeWhole(bytes: Uint8Array): { codec: 'raw' | 'zstd'; content: Uint8Array } {
  if (bytes.byteLength >= COMPRESS_MIN) {
    const packed = zlib().zstdCompressSync(bytes, zstdLevel());
    if (packed.byteLength < bytes.byteLength * 0.9) return { codec: 'zstd', content: packed };
  }
  return { codec: 'raw', content: bytes };
}

/** Unpacks a whole version (`raw`, `deflate` from stores before deltas, `zstd`). */
export function decodeWhole(codec: string, content: Uint8Array): Uint8Array {
  if (codec === 'raw') return content;
  if (codec === 'zstd') return new Uint8Array(zlib().zstdDecompressSync(content));
  if (codec === 'deflate') return new Uint8Array(zlib().inflateRawSync(content));
  throw new Error(`unknown blob codec ${codec}`);
}

/**
 * The delta that turns `base` into `target`, packed: its inserted bytes are
 * zstd-compressed when that saves a tenth (a version that rewrote much of
 * its neighbour), otherwise stored as they are.
 */
export function encodeDelta(base: Uint8Array, target: Uint8Array): { codec: 'delta' | 'delta-zstd'; content: Uint8Array } {
  const delta = makeDelta(base, target);
  if (delta.byteLength >= COMPRESS_MIN) {
    const packed = zlib().zstdCompressSync(delta, zstdLevel());
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
 * are found first with native comparisons and become two copy commands; the
 * part between is encoded by {@link encodeRange}.
 */
export function makeDelta(base: Uint8Array, target: Uint8Array): Uint8Array {
  const a = Buffer.from(base.buffer, base.byteOffset, base.byteLength);
  const b = Buffer.from(target.buffer, target.byteOffset, target.byteLength);
  const head = commonPrefix(a, b);
  const tail = commonSuffix(a, b, Math.min(a.length, b.length) - head);
  const out = new DeltaWriter();
  out.int(target.length, 0x0a);
  if (head > 0) out.copy(head, 0);
  encodeRange(a.subarray(head, a.length - tail), b.subarray(head, b.length - tail), head, out);
  if (tail > 0) out.copy(tail, base.length - tail);
  return out.done();
}

// The base is indexed in blocks of this many bytes, and the target scanned with a window as wide.
const BLOCK = 16;
// Base blocks remembered per hash bucket: a base made of one repeated block (a run of zeros) keeps only this many.
const BUCKET_MAX = 64;
// A match this long is taken without trying the bucket's other blocks.
const GOOD_MATCH = 4096;

/** How far `src` from `s` and `tgt` from `t` agree. */
function matchLength(src: Buffer, s: number, tgt: Buffer, t: number): number {
  const max = Math.min(src.length - s, tgt.length - t);
  let n = 0;
  // Most candidates fail within a few bytes (a hash collision): check those in JavaScript, the rest by memcmp.
  while (n < max && n < 32 && src[s + n] === tgt[t + n]) n++;
  if (n < 32) return n;
  while (n + 1024 <= max && src.subarray(s + n, s + n + 1024).equals(tgt.subarray(t + n, t + n + 1024))) n += 1024;
  while (n < max && src[s + n] === tgt[t + n]) n++;
  return n;
}

/**
 * Encodes `tgt` against `src` (which starts at `shift` in the whole base) as
 * copies and inserts, the way git's and Fossil's delta encoders do: every
 * 16-byte block of `src` is indexed by a rolling hash, the target is
 * scanned a byte at a time, and each hit is extended forward (and backward
 * into the bytes not yet copied). Unlike `fossil-delta`'s encoder, which
 * tries up to 250 blocks a position and extends each as far as it goes —
 * quadratic on a base with long repeated runs, where it took seconds — the
 * work is bounded: at most {@link BUCKET_MAX} blocks a bucket, and the first
 * match of {@link GOOD_MATCH} bytes is taken.
 */
function encodeRange(src: Buffer, tgt: Buffer, shift: number, out: DeltaWriter): void {
  const blocks = Math.floor(src.length / BLOCK);
  if (tgt.length < BLOCK || blocks === 0) {
    if (tgt.length > 0) out.insert(tgt);
    return;
  }
  const bits = Math.max(4, Math.ceil(Math.log2(blocks)));
  const headOf = new Int32Array(1 << bits).fill(-1);
  const counts = new Uint8Array(1 << bits);
  const next = new Int32Array(blocks);
  const bucket = (a: number, b: number) => Math.imul((b << 16) ^ a, 0x9e3779b1) >>> (32 - bits);
  for (let k = 0; k < blocks; k++) {
    let a = 0;
    let b = 0;
    for (let j = 0; j < BLOCK; j++) {
      const x = src[k * BLOCK + j] as number;
      a += x;
      b += (BLOCK - j) * x;
    }
    const slot = bucket(a, b);
    if ((counts[slot] as number) >= BUCKET_MAX) continue;
    counts[slot] = (counts[slot] as number) + 1;
    next[k] = headOf[slot] as number;
    headOf[slot] = k;
  }
  let i = 0;
  let lit = 0;
  let a = 0;
  let b = 0;
  const init = () => {
    a = 0;
    b = 0;
    for (let j = 0; j < BLOCK; j++) {
      const x = tgt[i + j] as number;
      a += x;
      b += (BLOCK - j) * x;
    }
  };
  init();
  for (;;) {
    let best = 0;
    let bestAt = 0;
    for (let k = headOf[bucket(a, b)] as number; k >= 0; k = next[k] as number) {
      const n = matchLength(src, k * BLOCK, tgt, i);
      if (n > best) {
        best = n;
        bestAt = k * BLOCK;
        if (n >= GOOD_MATCH) break;
      }
    }
    if (best >= BLOCK) {
      let back = 0;
      while (i - back > lit && bestAt - back > 0 && tgt[i - back - 1] === src[bestAt - back - 1]) back++;
      if (i - back > lit) out.insert(tgt.subarray(lit, i - back));
      out.copy(best + back, bestAt - back + shift);
      i += best;
      lit = i;
      if (i + BLOCK > tgt.length) break;
      init();
    } else {
      if (i + BLOCK >= tgt.length) break;
      const old = tgt[i] as number;
      a += (tgt[i + BLOCK] as number) - old;
      b += a - BLOCK * old;
      i++;
    }
  }
  if (lit < tgt.length) out.insert(tgt.subarray(lit));
}

/** The plain Fossil delta inside a packed one. */
export function unpackDelta(codec: 'delta' | 'delta-zstd', content: Uint8Array): Uint8Array {
  return codec === 'delta-zstd' ? new Uint8Array(zlib().zstdDecompressSync(content)) : content;
}

/** The version a packed delta makes of `base`. */
export function decodeDelta(codec: 'delta' | 'delta-zstd', content: Uint8Array, base: Uint8Array): Uint8Array {
  return applyDelta(base, unpackDelta(codec, content));
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
 * a malformed delta throws instead of producing wrong bytes.
 */
export function applyDelta(base: Uint8Array, delta: Uint8Array): Uint8Array {
  return Pieces.of(base).apply(delta).toBytes();
}

/**
 * A version as pieces of other buffers (the base and the deltas' inserted
 * bytes). A chain of deltas is applied piece list to piece list, and the
 * bytes are copied once at the end: a rebuild costs one copy of the version
 * and work in proportion to the deltas' commands, not one copy of the whole
 * version per delta.
 *
 * @example
 * ```ts
 * const v3 = Pieces.of(v1).apply(delta12).apply(delta23).toBytes();
 * ```
 */
export class Pieces {
  readonly #bufs: Uint8Array[] = [];
  readonly #offs: number[] = [];
  readonly #lens: number[] = [];
  // Where each piece starts in the version.
  readonly #starts: number[] = [];
  #length = 0;

  /** The version `bytes`, as one piece. */
  static of(bytes: Uint8Array): Pieces {
    const p = new Pieces();
    p.#push(bytes, 0, bytes.byteLength);
    return p;
  }

  get length(): number {
    return this.#length;
  }

  #push(buf: Uint8Array, off: number, len: number): void {
    if (len === 0) return;
    this.#bufs.push(buf);
    this.#offs.push(off);
    this.#lens.push(len);
    this.#starts.push(this.#length);
    this.#length += len;
  }

  /** The version `delta` makes of this one. */
  apply(delta: Uint8Array): Pieces {
    const r = new DeltaReader(delta);
    const size = r.int();
    r.expect(0x0a);
    const out = new Pieces();
    while (r.more) {
      const n = r.int();
      const op = r.op();
      if (op === 0x40 /* @ copy */) {
        const from = r.int();
        r.expect(0x2c);
        if (from + n > this.#length || out.#length + n > size) throw new Error('delta: copy out of range');
        this.#copyTo(out, from, n);
      } else if (op === 0x3a /* : insert */) {
        if (out.#length + n > size) throw new Error('delta: insert out of range');
        const start = r.pos;
        r.take(n);
        out.#push(delta, start, n);
      } else if (op === 0x3b /* ; end, with Fossil's checksum (the caller checks the SHA-256 instead) */) {
        if (out.#length !== size) throw new Error('delta: output size mismatch');
        return out;
      } else {
        throw new Error('delta: unknown command');
      }
    }
    throw new Error('delta: unterminated');
  }

  #copyTo(out: Pieces, from: number, n: number): void {
    // The piece holding `from`, by binary search over the starts.
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.#starts[mid] as number) <= from) lo = mid;
      else hi = mid - 1;
    }
    let k = lo;
    let at = from;
    let left = n;
    while (left > 0) {
      const skip = at - (this.#starts[k] as number);
      const take = Math.min(left, (this.#lens[k] as number) - skip);
      out.#push(this.#bufs[k] as Uint8Array, (this.#offs[k] as number) + skip, take);
      at += take;
      left -= take;
      k++;
    }
  }

  /** The version's bytes, copied into one new buffer. */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.#length);
    for (let k = 0; k < this.#bufs.length; k++) {
      const off = this.#offs[k] as number;
      out.set((this.#bufs[k] as Uint8Array).subarray(off, off + (this.#lens[k] as number)), this.#starts[k] as number);
    }
    return out;
  }
}
