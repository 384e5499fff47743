/**
 * The lifetime of streamed chunks (the contract on `ByteReader`): an
 * iterated chunk holds the right bytes until the next one is requested,
 * however long the caller takes or whatever else it does meanwhile; a copy
 * (`chunk.slice()`) keeps them for good; `read()` results are the caller's;
 * writing into a chunk, or seeking back over it, never shows altered bytes.
 * Files are larger than a read-ahead buffer (1 MiB) and chunk sizes do not
 * divide it, so a backend that lends views of a refilled buffer is tested
 * across its refills.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import type { SuiteContext } from '../context.ts';
import { patternBytes } from './streaming-read.ts';

/** Larger than two read-ahead buffers, not a multiple of anything below. */
const SIZE = 2 * 1024 * 1024 + 12_345;
const CHUNK = 4096 + 7;

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export function streamingLifetimeSection(ctx: SuiteContext): void {
  const timeout = Math.max(ctx.target.timeout ?? 0, 60_000);
  const content = patternBytes(SIZE, 7);
  const seeded = () => ctx.make({ files: { 'big.bin': content } });

  it(
    'a chunk keeps its bytes until the next is requested, whatever the caller does meanwhile',
    async () => {
      const fs = await seeded();
      await using reader = await fs.openRead('big.bin', { chunkSize: CHUNK });
      let at = 0;
      let i = 0;
      for await (const chunk of reader) {
        const expected = content.subarray(at, at + chunk.byteLength);
        expect(chunk.byteLength).toBeGreaterThan(0);
        expect(chunk.byteLength).toBeLessThanOrEqual(CHUNK);
        // Yield to the event loop (a background read-ahead would land now), and every so often use the same file through other calls too.
        await tick();
        if (i % 97 === 0) {
          await fs.readBytes('big.bin', { offset: (at + 1_000_000) % SIZE, limit: 5000 });
          await using other = await fs.openRead('big.bin', { chunkSize: CHUNK });
          for await (const c of other) if (c.byteLength === 0) break;
          await tick();
        }
        if (Buffer.compare(chunk, expected) !== 0) throw new Error(`chunk ${i} at ${at} changed before the next was requested`);
        at += chunk.byteLength;
        i++;
      }
      expect(at).toBe(SIZE);
    },
    timeout,
  );

  it(
    'copies taken with chunk.slice() stay intact to the end of the stream',
    async () => {
      const fs = await seeded();
      await using reader = await fs.openRead('big.bin', { chunkSize: CHUNK });
      const kept: Uint8Array[] = [];
      for await (const chunk of reader) kept.push(chunk.slice());
      expect(sha(Buffer.concat(kept))).toBe(sha(content));
    },
    timeout,
  );

  it(
    'read() results are the caller’s: reading and iterating on does not change them',
    async () => {
      const fs = await seeded();
      await using reader = await fs.openRead('big.bin', { chunkSize: CHUNK });
      const first = await reader.read(3000);
      const iterator = reader[Symbol.asyncIterator]();
      let skipped = 0;
      for (let k = 0; k < 600; k++) {
        const r = await iterator.next();
        if (r.done) break;
        skipped += r.value.byteLength;
      }
      const secondAt = 3000 + skipped;
      expect(reader.position).toBe(secondAt);
      const second = await reader.read(3000);
      for await (const _ of reader) {
        // drain
      }
      // A read returns up to its length (a stream may hand over less mid-file), never nothing before the end.
      expect(first.byteLength).toBeGreaterThan(0);
      expect(second.byteLength > 0).toBe(secondAt < content.byteLength);
      expect(Buffer.compare(first, content.subarray(0, first.byteLength))).toBe(0);
      expect(Buffer.compare(second, content.subarray(secondAt, secondAt + second.byteLength))).toBe(0);
    },
    timeout,
  );

  it(
    'writing into chunks and seeking back serves the file’s bytes, not the altered ones',
    async () => {
      const fs = await seeded();
      await using reader = await fs.openRead('big.bin', { chunkSize: CHUNK });
      // One iterator throughout: a seek must not let it serve the bytes it lent and the caller overwrote.
      const iterator = reader[Symbol.asyncIterator]();
      let lent = 0;
      for (let n = 0; n < 40; n++) {
        const r = await iterator.next();
        if (r.done) break;
        lent += r.value.byteLength;
        r.value.fill(0x21);
      }
      expect(reader.position).toBe(lent);
      const from = CHUNK * 3 + 5;
      reader.seek(from);
      const again: Uint8Array[] = [];
      for (let n = 0; n < 50; n++) {
        const r = await iterator.next();
        if (r.done) break;
        again.push(r.value.slice());
      }
      const got = Buffer.concat(again);
      expect(got.byteLength).toBeGreaterThan(0);
      expect(Buffer.compare(got, content.subarray(from, from + got.byteLength))).toBe(0);
      expect(sha(await fs.readBytes('big.bin'))).toBe(sha(content));
    },
    timeout,
  );

  it(
    'iteration, read() and readInto() share one position',
    async () => {
      const fs = await seeded();
      await using reader = await fs.openRead('big.bin', { chunkSize: CHUNK });
      const out: Uint8Array[] = [];
      const buffer = new Uint8Array(10_000);
      const iterator = reader[Symbol.asyncIterator]();
      for (let k = 0; reader.position < SIZE; k++) {
        if (k % 3 === 0) {
          const r = await iterator.next();
          if (r.done) break;
          out.push(r.value.slice());
        } else if (k % 3 === 1) {
          out.push(await reader.read(777));
        } else {
          const got = await reader.readInto(buffer);
          out.push(buffer.slice(0, got));
        }
      }
      expect(sha(Buffer.concat(out))).toBe(sha(content));
    },
    timeout,
  );

  it(
    'next() called again before the last one settled still yields every chunk once, in order',
    async () => {
      const fs = await seeded();
      await using reader = await fs.openRead('big.bin', { chunkSize: 65_536 });
      const iterator = reader[Symbol.asyncIterator]();
      let at = 0;
      for (;;) {
        // Two requests at once: the first chunk is lent only until the second is asked for, so only its length counts.
        const [a, b] = await Promise.all([iterator.next(), iterator.next()]);
        if (!a.done) at += a.value.byteLength;
        if (b.done) break;
        if (Buffer.compare(b.value, content.subarray(at, at + b.value.byteLength)) !== 0) throw new Error(`the chunk at ${at} is wrong`);
        at += b.value.byteLength;
      }
      expect(at).toBe(SIZE);
    },
    timeout,
  );
}
