/**
 * Hashing one file through a reused buffer: the step every backend's
 * `digest` shares, so all of them agree byte for byte on sizes, heads and
 * hashes.
 *
 * @module
 */

import { createHash, hash } from 'node:crypto';

/** Size of the buffer a digest reads through; most files fit in one fill. */
export const DIGEST_BUFFER_BYTES = 1 << 20;

/** Largest `headBytes` a digest returns. */
export const MAX_DIGEST_HEAD_BYTES = 64 * 1024;

/** A file's digest before it is tied to a path. */
export interface StreamDigest {
  readonly size: number;
  readonly sha256: string;
  readonly head: Uint8Array | undefined;
}

/**
 * Hashes a file read through `read` (fills the target it is given and
 * returns how many bytes, 0 at the end) using `buffer` as the only storage.
 * The head is a copy, so the buffer can go on to the next file: into
 * `headTarget` when given (at least `headBytes` long, and the head is a view
 * of it), else into a new array.
 *
 * @example
 * ```ts
 * await using reader = await fs.openRead('a.bin');
 * const d = await digestStream((b) => reader.readInto(b), new Uint8Array(DIGEST_BUFFER_BYTES), 0);
 * d.sha256; // 'e3b0c442...'
 * ```
 */
export async function digestStream(
  read: (target: Uint8Array) => number | Promise<number>,
  buffer: Uint8Array,
  headBytes: number,
  headTarget?: Uint8Array,
): Promise<StreamDigest> {
  let size = 0;
  // Fill the whole buffer first: most files fit, and one-shot hashing of a
  // single view is cheaper than an incremental hash object.
  while (size < buffer.byteLength) {
    const n = await read(buffer.subarray(size));
    if (n === 0) break;
    size += n;
  }
  const head = headBytes > 0 ? copyOf(buffer.subarray(0, Math.min(size, headBytes)), headTarget) : undefined;
  if (size < buffer.byteLength) return { size, sha256: hash('sha256', buffer.subarray(0, size), 'hex'), head };
  const h = createHash('sha256').update(buffer);
  for (let n = await read(buffer); n > 0; n = await read(buffer)) {
    h.update(buffer.subarray(0, n));
    size += n;
  }
  return { size, sha256: h.digest('hex'), head };
}

function copyOf(view: Uint8Array, target: Uint8Array | undefined): Uint8Array {
  const out = target === undefined ? new Uint8Array(view.byteLength) : target.subarray(0, view.byteLength);
  out.set(view);
  return out;
}
