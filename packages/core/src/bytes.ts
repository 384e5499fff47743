/**
 * Byte-array helpers shared by the scanner, the codecs and the backends.
 *
 * @module
 */

/**
 * Joins byte arrays into one new array.
 *
 * @example
 * ```ts
 * concatBytes([new Uint8Array([1]), new Uint8Array([2, 3])]); // Uint8Array [1, 2, 3]
 * ```
 */
export function concatBytes(parts: readonly Uint8Array[], totalLength?: number): Uint8Array {
  let size = totalLength ?? 0;
  if (totalLength === undefined) for (const p of parts) size += p.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
