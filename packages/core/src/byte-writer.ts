/**
 * A {@link ByteWriter} over a backend's commit/abort sink. The wrapper owns
 * the state machine (open → committed | aborted), so every backend gets the
 * same semantics: writes after close throw `ECLOSED`, close is idempotent,
 * abort after close is a no-op, and disposal without close aborts.
 *
 * @module
 */

import { fsError, toFsError } from './errors.ts';
import type { ByteWriter, WriteMode, WriteResult } from './types.ts';

/** What a backend supplies to receive a stream of bytes. */
export interface WriteSink {
  /** Accepts one chunk; the sink may copy it or write it to a staging area. */
  write(chunk: Uint8Array): Promise<void> | void;
  /** Makes the bytes visible at the target, atomically. */
  commit(): Promise<void> | void;
  /** Throws the staged bytes away; the target is untouched. */
  abort(): Promise<void> | void;
}

type State = 'open' | 'committing' | 'committed' | 'aborted';

class SinkByteWriter implements ByteWriter {
  readonly path: string;
  readonly mode: WriteMode;
  #bytes = 0;
  #state: State = 'open';
  #result: WriteResult | undefined;
  readonly #sink: WriteSink;
  #pending: Promise<void> = Promise.resolve();
  /** The first failed write; a close after it must not commit a partial stream. */
  #failure: unknown;

  constructor(sink: WriteSink, path: string, mode: WriteMode) {
    this.#sink = sink;
    this.path = path;
    this.mode = mode;
  }

  get bytesWritten(): number {
    return this.#bytes;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#state !== 'open') {
      throw fsError('ECLOSED', 'write', this.path, { reason: `writer is ${this.#state}` });
    }
    if (!(chunk instanceof Uint8Array)) {
      throw fsError('EINVAL', 'write', this.path, { reason: 'chunk must be a Uint8Array' });
    }
    // Writes are serialized so a caller that does not await still gets its
    // chunks in order.
    const run = this.#pending.then(async () => {
      // A write accepted while open still lands if close() started meanwhile
      // (close waits for it); only an abort cancels queued writes.
      if (this.#state === 'aborted') throw fsError('ECLOSED', 'write', this.path, { reason: 'writer is aborted' });
      await this.#sink.write(chunk);
      this.#bytes += chunk.byteLength;
    });
    this.#pending = run.catch((err: unknown) => {
      this.#failure ??= err;
    });
    try {
      await run;
    } catch (err) {
      await this.abort();
      throw toFsError(err, 'write', this.path);
    }
  }

  async close(): Promise<WriteResult> {
    if (this.#state === 'committed' && this.#result) return this.#result;
    if (this.#state !== 'open') throw fsError('ECLOSED', 'write', this.path, { reason: `writer is ${this.#state}` });
    this.#state = 'committing';
    await this.#pending;
    if (this.#failure !== undefined) {
      this.#state = 'aborted';
      try {
        await this.#sink.abort();
      } catch {
        // The write error is the one the caller needs.
      }
      throw toFsError(this.#failure, 'write', this.path);
    }
    try {
      await this.#sink.commit();
    } catch (err) {
      this.#state = 'aborted';
      try {
        await this.#sink.abort();
      } catch {
        // The commit error is the one the caller needs.
      }
      throw toFsError(err, 'write', this.path);
    }
    this.#state = 'committed';
    this.#result = { path: this.path, bytesWritten: this.#bytes, mode: this.mode };
    return this.#result;
  }

  async abort(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'aborted';
    await this.#pending;
    await this.#sink.abort();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.abort();
  }
}

/**
 * Wraps a backend sink as a {@link ByteWriter}.
 *
 * @example
 * ```ts
 * const parts: Uint8Array[] = [];
 * const writer = createByteWriter(
 *   { write: (c) => void parts.push(Uint8Array.prototype.slice.call(c)), commit: () => save(parts), abort: () => void (parts.length = 0) },
 *   'out.bin',
 *   'overwrite',
 * );
 * ```
 */
export function createByteWriter(sink: WriteSink, path: string, mode: WriteMode): ByteWriter {
  return new SinkByteWriter(sink, path, mode);
}
