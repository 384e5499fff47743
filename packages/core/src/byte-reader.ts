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

/**
 * How far an iteration reads ahead: chunks are views of one buffer this large
 * (a whole number of chunks), refilled with one positional read when they are
 * used up. A 64 KiB chunk then costs a view, not a read and an allocation:
 * iteration runs at the speed of `readInto` with a buffer of this size, in
 * this much memory, however long the file.
 */
export const READ_AHEAD_BYTES = 1 << 20;

/**
 * What an iteration's first fill reads (at least a chunk): each fill after
 * it reads twice as much, up to {@link READ_AHEAD_BYTES}, so a range near
 * the start of a large file costs about what it spans, not a megabyte,
 * while a long read still reaches full blocks after five fills.
 */
export const FIRST_FILL_BYTES = 64 * 1024;

/** The read-ahead block of one iteration: `bytes[0]` is the file's byte at `start`. */
interface Block {
  readonly bytes: Uint8Array;
  start: number;
  length: number;
}

class RandomAccessByteReader implements ByteReader {
  readonly path: string;
  readonly size: number;
  #position: number;
  #closed = false;
  readonly #source: RandomAccessSource;
  readonly #chunkSize: number;
  /** Bumped by every seek: an iteration's read-ahead is dropped once the caller moved the position itself. */
  #seeks = 0;

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
    this.#assertOpen();
    if (!Number.isSafeInteger(length) || length < 0) {
      throw fsError('EINVAL', 'read', this.path, { reason: `length must be a non-negative integer, got ${length}` });
    }
    if (length === 0) return new Uint8Array(0);
    const chunk = await this.#source.readAt(this.#position, length);
    this.#position += chunk.byteLength;
    return chunk;
  }

  async readInto(target: Uint8Array): Promise<number> {
    this.#assertOpen();
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
    this.#assertOpen();
    if (!Number.isSafeInteger(offset)) {
      throw fsError('EINVAL', 'read', this.path, { reason: `seek offset must be an integer, got ${offset}` });
    }
    const base = whence === 'start' ? 0 : whence === 'current' ? this.#position : whence === 'end' ? this.size : Number.NaN;
    if (Number.isNaN(base)) throw fsError('EINVAL', 'read', this.path, { reason: `unknown whence '${String(whence)}'` });
    const next = base + offset;
    if (next < 0) throw fsError('EINVAL', 'read', this.path, { reason: `seek to negative offset ${next}` });
    this.#position = next;
    this.#seeks++;
    return next;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#source.close?.();
  }

  #assertOpen(): void {
    if (this.#closed) throw fsError('ECLOSED', 'read', this.path, { reason: 'reader is closed' });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Uint8Array> {
    const fill = this.#source.readInto;
    if (fill === undefined) return this.#freshChunks();
    // A hand-written iterator, not an async generator: per chunk it costs a
    // view and a settled promise, which at 64 KiB is most of the budget.
    const full = this.#chunkSize >= READ_AHEAD_BYTES ? this.#chunkSize : this.#chunkSize * Math.floor(READ_AHEAD_BYTES / this.#chunkSize);
    // No larger than what is left of the file (and a byte to see its end): a small file costs a small buffer.
    const size = Math.max(1, Math.min(full, this.size - this.#position + 1));
    // Whole chunks from the first fill on (doubling keeps them whole), so no chunk is cut short mid-file.
    let want = Math.min(size, this.#chunkSize * Math.max(1, Math.ceil(FIRST_FILL_BYTES / this.#chunkSize)));
    let block: Block | undefined;
    let seeks = this.#seeks;
    let done = false;
    const finished = (): IteratorResult<Uint8Array> => ({ done: true, value: undefined });
    const next = (): IteratorResult<Uint8Array> | Promise<IteratorResult<Uint8Array>> => {
      if (done) return finished();
      if (this.#closed) {
        // A reader closed by the caller mid-iteration simply ends the loop.
        done = true;
        return finished();
      }
      const at = this.#position;
      // A seek may have moved back over bytes the caller was handed (and may have changed): read afresh.
      if (seeks !== this.#seeks) {
        seeks = this.#seeks;
        if (block !== undefined) block.length = 0;
      }
      if (block !== undefined && at >= block.start && at < block.start + block.length) return this.#serve(block, at);
      // A larger block replaces the last: the chunks handed out of it were the caller's only until this call.
      if (block === undefined || block.bytes.length < want) block = { bytes: new Uint8Array(want), start: 0, length: 0 };
      const filled = block;
      filled.start = at;
      filled.length = 0;
      want = Math.min(size, want * 2);
      const got = fill.call(this.#source, at, filled.bytes);
      if (typeof got === 'number') return this.#afterFill(filled, at, got, () => (done = true));
      return got.then((n) => this.#afterFill(filled, at, n, () => (done = true)));
    };
    // Calls made before the previous one settled wait for it, in order, as an async generator's do.
    let last: Promise<IteratorResult<Uint8Array>> | undefined;
    const track = (p: Promise<IteratorResult<Uint8Array>>): Promise<IteratorResult<Uint8Array>> => {
      last = p;
      const clear = () => {
        if (last === p) last = undefined;
      };
      p.then(clear, clear);
      return p;
    };
    return {
      next: () => {
        if (last !== undefined) return track(last.then(next, next));
        let r: IteratorResult<Uint8Array> | Promise<IteratorResult<Uint8Array>>;
        try {
          r = next();
        } catch (err) {
          return Promise.reject(err);
        }
        return r instanceof Promise ? track(r) : Promise.resolve(r);
      },
      return: () => {
        done = true;
        return Promise.resolve(finished());
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  #afterFill(block: Block, at: number, n: number, end: () => void): IteratorResult<Uint8Array> {
    if (n === 0) {
      end();
      return { done: true, value: undefined };
    }
    block.length = n;
    return this.#serve(block, at);
  }

  /** The next chunk as a view of the read-ahead block. */
  #serve(block: Block, at: number): IteratorResult<Uint8Array> {
    const from = at - block.start;
    const to = Math.min(from + this.#chunkSize, block.length);
    this.#position = at + (to - from);
    return { done: false, value: block.bytes.subarray(from, to) };
  }

  /** Iteration over a source that only hands out fresh arrays (each chunk is the caller's to keep). */
  async *#freshChunks(): AsyncIterableIterator<Uint8Array> {
    try {
      for (;;) {
        const chunk = await this.read();
        if (chunk.byteLength === 0) return;
        yield chunk;
      }
    } catch (err) {
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
