/**
 * The byte codecs of stored history: a whole version compressed on its own,
 * and a version as a delta against a neighbour.
 *
 * Deltas use Fossil's delta format (copy ranges of the base, insert new
 * bytes), made by the `fossil-delta` package: it indexes the base in 16-byte
 * blocks and extends every hash hit both ways, so a one-line edit of a
 * 200 KB file costs about 50 bytes and half a millisecond, for text and
 * binary alike. zstd with the neighbour as a dictionary (zstd's own
 * "patch-from") was measured beside it and lost on the files history holds:
 * 550–1,300 bytes a one-line edit at levels that are as fast (its hash
 * tables miss the long matches in repetitive source), 47 bytes only at
 * level 19, which takes 100 ms. The package's own `applyDelta` builds its
 * output byte by byte in a JavaScript array (8 ms a step on 200 KB), too
 * slow for a chain of deltas, so {@link applyDelta} here reads the same
 * format with two typed-array copies per command (tens of microseconds).
 *
 * Whole versions are compressed with zstd (node:zlib): level 3 packs source
 * to half of what deflate level 1 did, in half the time.
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
  if (deltaCost(base, target) > MAX_DELTA_WORK) return undefined;
  const delta = fossilCreate(base, target);
  if (delta.byteLength >= COMPRESS_MIN) {
    const packed = zstdCompressSync(delta, ZSTD_LEVEL);
    if (packed.byteLength < delta.byteLength * 0.9) return { codec: 'delta-zstd', content: packed };
  }
  return { codec: 'delta', content: delta };
}

/** The plain Fossil delta inside a packed one. */
export function unpackDelta(codec: 'delta' | 'delta-zstd', content: Uint8Array): Uint8Array {
  return codec === 'delta-zstd' ? new Uint8Array(zstdDecompressSync(content)) : content;
}

/** The version a packed delta makes of `base`. */
export function decodeDelta(codec: 'delta' | 'delta-zstd', content: Uint8Array, base: Uint8Array): Uint8Array {
  return applyDelta(base, unpackDelta(codec, content));
}

// Fossil writes its integers in base 64 with these digits.
const DIGIT = new Int8Array(128).fill(-1);
for (const [i, c] of [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~'].entries()) DIGIT[c.charCodeAt(0)] = i;

/** The size of the version a Fossil-format delta makes. */
export function deltaTargetSize(delta: Uint8Array): number {
  let v = 0;
  let pos = 0;
  while (pos < delta.length && pos < 9) {
    const d = DIGIT[(delta[pos] as number) & 0x7f] as number;
    if (d < 0) break;
    v = v * 64 + d;
    pos++;
  }
  if (pos === 0 || delta[pos] !== 0x0a) throw new Error('delta: bad size header');
  return v;
}

/**
 * Applies a Fossil-format delta to `base`. Every command is bounds-checked;
 * a malformed delta throws instead of producing wrong bytes. With `scratch`
 * (at least the target's size, and not `base`'s memory) the result is a
 * view of it, so a chain of deltas reuses two buffers instead of allocating
 * a whole version per step.
 */
export function applyDelta(base: Uint8Array, delta: Uint8Array, scratch?: Uint8Array): Uint8Array {
  let pos = 0;
  const int = (): number => {
    let v = 0;
    const start = pos;
    while (pos < delta.length) {
      const d = DIGIT[(delta[pos] as number) & 0x7f] as number;
      if (d < 0) break;
      v = v * 64 + d;
      pos++;
    }
    if (pos === start || pos - start > 8) throw new Error('delta: bad integer');
    return v;
  };
  const size = int();
  if (delta[pos++] !== 0x0a) throw new Error('delta: size not terminated');
  const out = scratch !== undefined && scratch.byteLength >= size ? scratch.subarray(0, size) : new Uint8Array(size);
  let at = 0;
  while (pos < delta.length) {
    const n = int();
    const op = delta[pos++];
    if (op === 0x40 /* @ copy */) {
      const from = int();
      if (delta[pos++] !== 0x2c) throw new Error('delta: copy not terminated');
      if (from + n > base.length || at + n > size) throw new Error('delta: copy out of range');
      out.set(base.subarray(from, from + n), at);
      at += n;
    } else if (op === 0x3a /* : insert */) {
      if (pos + n > delta.length || at + n > size) throw new Error('delta: insert out of range');
      out.set(delta.subarray(pos, pos + n), at);
      at += n;
      pos += n;
    } else if (op === 0x3b /* ; end, with Fossil's checksum (the caller checks the SHA-256 instead) */) {
      if (at !== size) throw new Error('delta: output size mismatch');
      return out;
    } else {
      throw new Error('delta: unknown command');
    }
  }
  throw new Error('delta: unterminated');
}
