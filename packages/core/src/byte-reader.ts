/**
 * A {@link ByteReader} over any random-access byte source. Backends with
 * positional reads (memory buffers, host file handles) supply `readAt` and get
 * chunking, seek, position tracking, close semantics and disposal for free.
 *
 * @module
 */

import { FsError, fsError } from './errors.ts';
import type { ByteReader, SeekWhence } from './types.ts';

/** The positional-read primitive a backend supplies. */
export interface RandomAccessSource {
  /** Size of the file at open time. */
  readonly size: number;
  /** Reads up to `length` bytes at `position`; fewer (or none) at the end. */
  readAt(position: number, length: number): Promise<Uint8Array> | Uint8Array;
  /**
   * Reads up to `target.byteLength` bytes at `position` into `target`;
   * returns how many. Optional: without it, `readInto` copies from `readAt`.
   */
  readInto?(position: number, target: Uint8Array): Promise<number> | number;
  /** Releases the underlying handle. Called once. */
  close?(): Promise<void> | void;
}

/** Options of {@link createByteReader}. */
export interface ByteReaderOptions {
  path: string;
  chunkSize: number;
  offset?: number;
}

class RandomAccessByteReader implements ByteReader {
  readonly path: string;
  readonly size: number;
  #position: number;
  #closed = false;
  readonly #source: RandomAccessSource;
  readonly #chunkSize: number;

  constructor(source: RandomAccessSource, options: ByteReaderOptions) {
    this.#source = source;
    this.path = options.path;
    this.size = source.size;
    this.#chunkSize = options.chunkSize;
    this.#position = options.offset ?? 0;
  }

  get position(): number {
    return this.#position;
  }

  async read(length: number = this.#chunkSize): Promise<Uint8Array> {
    if (this.#closed) throw fsError('ECLOSED', 'read', this.path, { reason: 'reader is closed' });
    if (!Number.isSafeInteger(length) || length < 0) {
      throw fsError('EINVAL', 'read', this.path, { reason: `length must be a non-negative integer, got ${length}` });
    }
    if (length === 0) return new Uint8Array(0);
    const chunk = await this.#source.readAt(this.#position, length);
    this.#position += chunk.byteLength;
    return chunk;
  }

  async readInto(target: Uint8Array): Promise<number> {
    if (this.#closed) throw fsError('ECLOSED', 'read', this.path, { reason: 'reader is closed' });
    if (!(target instanceof Uint8Array)) throw fsError('EINVAL', 'read', this.path, { reason: 'readInto needs a Uint8Array to fill' });
    if (target.byteLength === 0) return 0;
    let n: number;
    if (this.#source.readInto) n = await this.#source.readInto(this.#position, target);
    else {
      const chunk = await this.#source.readAt(this.#position, target.byteLength);
      target.set(chunk);
      n = chunk.byteLength;
    }
    this.#position += n;
    return n;
  }

  seek(offset: number, whence: SeekWhence = 'start'): number {
    if (this.#closed) throw fsError('ECLOSED', 'read', this.path, { reason: 'reader is closed' });
    if (!Number.isSafeInteger(offset)) {
      throw fsError('EINVAL', 'read', this.path, { reason: `seek offset must be an integer, got ${offset}` });
    }
    const base = whence === 'start' ? 0 : whence === 'current' ? this.#position : whence === 'end' ? this.size : Number.NaN;
    if (Number.isNaN(base)) throw fsError('EINVAL', 'read', this.path, { reason: `unknown whence '${String(whence)}'` });
    const next = base + offset;
    if (next < 0) throw fsError('EINVAL', 'read', this.path, { reason: `seek to negative offset ${next}` });
    this.#position = next;
    return next;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#source.close?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    try {
      for (;;) {
        const chunk = await this.read();
        if (chunk.byteLength === 0) return;
        yield chunk;
      }
    } catch (err) {
      // A reader closed by the caller mid-iteration simply ends the loop.
      if (err instanceof FsError && err.code === 'ECLOSED' && this.#closed) return;
      throw err;
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Wraps a positional source as a {@link ByteReader}.
 *
 * @example
 * ```ts
 * const bytes = new Uint8Array([1, 2, 3]);
 * const reader = createByteReader(
 *   { size: bytes.length, readAt: (pos, len) => bytes.slice(pos, pos + len) },
 *   { path: 'x.bin', chunkSize: 2 },
 * );
 * for await (const chunk of reader) console.log(chunk); // [1,2] then [3]
 * ```
 */
export function createByteReader(source: RandomAccessSource, options: ByteReaderOptions): ByteReader {
  return new RandomAccessByteReader(source, options);
}
