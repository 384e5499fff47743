import { describe, expect, it } from 'vitest';
import { createByteReader, type RandomAccessSource, READ_AHEAD_BYTES } from '../src/byte-reader.ts';

/** A source over `bytes` that records every positional read it is asked for. */
function recordingSource(bytes: Uint8Array, options: { async?: boolean } = {}): RandomAccessSource & { fills: number[]; reads: number } {
  const fills: number[] = [];
  const source = {
    fills,
    reads: 0,
    size: bytes.byteLength,
    readAt(pos: number, len: number) {
      source.reads++;
      return bytes.slice(pos, pos + len);
    },
    readInto(pos: number, target: Uint8Array) {
      fills.push(target.byteLength);
      const part = bytes.subarray(Math.min(pos, bytes.byteLength), Math.min(pos + target.byteLength, bytes.byteLength));
      target.set(part);
      return options.async ? Promise.resolve(part.byteLength) : part.byteLength;
    },
  };
  return source;
}

const content = Uint8Array.from({ length: 3 * READ_AHEAD_BYTES + 999 }, (_, i) => (i * 31 + (i >> 8)) & 0xff);

describe('iteration reads ahead into one reused buffer', () => {
  it.each([false, true])('64 KiB chunks cost one fill per read-ahead buffer, not one per chunk (async source: %s)', async (async) => {
    const source = recordingSource(content, { async });
    const reader = createByteReader(source, { path: 'x', chunkSize: 65_536 });
    const seen = new Set<ArrayBufferLike>();
    let total = 0;
    let chunks = 0;
    for await (const chunk of reader) {
      expect(Buffer.compare(chunk, content.subarray(total, total + chunk.byteLength))).toBe(0);
      seen.add(chunk.buffer);
      total += chunk.byteLength;
      chunks++;
    }
    expect(total).toBe(content.byteLength);
    expect(chunks).toBe(Math.ceil(content.byteLength / 65_536));
    // Fills double from 64 KiB to the read-ahead (960 KiB in four), then 1 MiB each (the last one short), then one finds the end.
    const K = 1024;
    expect(source.fills).toEqual([64 * K, 128 * K, 256 * K, 512 * K, READ_AHEAD_BYTES, READ_AHEAD_BYTES, READ_AHEAD_BYTES, READ_AHEAD_BYTES]);
    expect(source.reads).toBe(0);
    // Every chunk was a view of a buffer of one of those sizes: memory stays at one read-ahead however long the file.
    expect(seen.size).toBe(5);
  });

  it('a chunk size above the read-ahead is the buffer size', async () => {
    const source = recordingSource(content);
    const reader = createByteReader(source, { path: 'x', chunkSize: 2 * READ_AHEAD_BYTES });
    const sizes: number[] = [];
    for await (const chunk of reader) sizes.push(chunk.byteLength);
    expect(sizes).toEqual([2 * READ_AHEAD_BYTES, READ_AHEAD_BYTES + 999]);
  });

  it('the read-ahead buffer is a whole number of chunks, so no chunk is cut short mid-file', async () => {
    const source = recordingSource(content);
    const reader = createByteReader(source, { path: 'x', chunkSize: 100_000 });
    const sizes: number[] = [];
    for await (const chunk of reader) sizes.push(chunk.byteLength);
    expect(sizes.slice(0, -1).every((n) => n === 100_000)).toBe(true);
    // One chunk first (it is above 64 KiB), then doubling, up to ten chunks (the largest whole number within 1 MiB).
    expect(source.fills.slice(0, 5)).toEqual([100_000, 200_000, 400_000, 800_000, 1_000_000]);
    // A chunk that does not divide 64 KiB: the first fill is whole chunks too.
    const odd = recordingSource(content);
    const oddSizes: number[] = [];
    for await (const chunk of createByteReader(odd, { path: 'x', chunkSize: 1000 })) oddSizes.push(chunk.byteLength);
    expect(oddSizes.slice(0, -1).every((n) => n === 1000)).toBe(true);
    expect(odd.fills[0]).toBe(66_000);
  });

  it('a range near the start of a large file reads about what it spans, not a whole read-ahead', async () => {
    const source = recordingSource(content);
    const reader = createByteReader(source, { path: 'x', chunkSize: 65_536 });
    let total = 0;
    for await (const chunk of reader) {
      total += chunk.byteLength;
      if (total >= 110_000) break;
    }
    expect(source.fills).toEqual([65_536, 131_072]);
  });

  it('a source without readInto hands out its own fresh arrays', async () => {
    const { readInto: _, ...plain } = recordingSource(content);
    const reader = createByteReader(plain, { path: 'x', chunkSize: 65_536 });
    const kept: Uint8Array[] = [];
    for await (const chunk of reader) kept.push(chunk);
    expect(Buffer.compare(Buffer.concat(kept), content)).toBe(0);
    expect(new Set(kept.map((k) => k.buffer)).size).toBe(kept.length);
  });

  it('closing the reader mid-iteration ends the loop', async () => {
    const reader = createByteReader(recordingSource(content), { path: 'x', chunkSize: 65_536 });
    let n = 0;
    for await (const _ of reader) if (++n === 3) await reader.close();
    expect(n).toBe(3);
  });
});
