/**
 * Random access over a forward-only remote stream: reads at the cursor take
 * bytes as they arrive (one chunk in memory), a forward seek skips, a
 * backward seek reopens the stream at the new position.
 *
 * @module
 */

import { SilenceError } from './deadline.ts';

/** A forward-only byte stream opened at some position. */
export interface ForwardStream {
  /** The next bytes (everything buffered so far), or undefined at the end. */
  next(): Promise<Uint8Array | undefined>;
  /** Where the stream starts in the file. */
  readonly start: number;
  close(): void;
}

/** A file inside the container, read through remote streams. */
export interface RemoteFile {
  readonly size: number;
  readAt(position: number, length: number): Promise<Uint8Array>;
  close(): void;
}

/**
 * Wraps `open` (which starts a stream at a position) as a {@link RemoteFile}
 * of `size` bytes; `first` is a stream already opened at 0, if any.
 */
export function sequentialFile(
  size: number,
  open: (position: number) => Promise<ForwardStream>,
  onError: (err: unknown) => Error,
  first?: ForwardStream,
): RemoteFile {
  let stream: ForwardStream | undefined = first;
  let position = first?.start ?? 0;
  let carry: Uint8Array = new Uint8Array(0);
  let ended = false;
  const drop = () => {
    stream?.close();
    stream = undefined;
    carry = new Uint8Array(0);
    ended = false;
  };
  return {
    size,
    async readAt(at: number, length: number): Promise<Uint8Array> {
      if (at >= size || length === 0) return new Uint8Array(0);
      try {
        if (stream === undefined || at < position) {
          drop();
          stream = await open(at);
          position = stream.start;
        }
        const s = stream;
        const pull = async () => {
          const next = await s.next();
          if (next === undefined) ended = true;
          else carry = next;
        };
        while (position + carry.byteLength <= at && !ended) {
          position += carry.byteLength;
          carry = new Uint8Array(0);
          await pull();
        }
        const skip = Math.min(Math.max(0, at - position), carry.byteLength);
        carry = carry.subarray(skip);
        position += skip;
        if (carry.byteLength === 0 && !ended) await pull();
        const out = carry.subarray(0, length);
        carry = carry.subarray(out.byteLength);
        position += out.byteLength;
        if (ended && out.byteLength === 0 && position < size) {
          throw Object.assign(new Error('the stream ended before the end of the file'), { code: 'ESTREAMEND' });
        }
        return out;
      } catch (err) {
        drop();
        throw onError(err);
      }
    },
    close() {
      drop();
    },
  };
}

/**
 * `next` over a Node Readable: takes all it has buffered at once (fewer,
 * larger chunks than iteration). With `timeoutMs`, a wait that sees no byte
 * for that long rejects with a {@link SilenceError} (a container paused
 * mid-stream sends nothing, and would otherwise hold the reader forever).
 */
export function readableNext(r: import('node:stream').Readable, timeoutMs?: number): () => Promise<Uint8Array | undefined> {
  return async () => {
    for (;;) {
      const chunk = r.read() as Buffer | null;
      if (chunk !== null) return chunk;
      if (r.readableEnded) return undefined;
      if (r.errored) throw r.errored;
      await new Promise<void>((resolve, reject) => {
        const timer = timeoutMs === undefined ? undefined : setTimeout(() => fail(new SilenceError(`the stream sent nothing for ${timeoutMs} ms`)), timeoutMs);
        const off = () => {
          if (timer !== undefined) clearTimeout(timer);
          r.off('readable', done);
          r.off('end', done);
          r.off('error', fail);
        };
        const done = () => {
          off();
          resolve();
        };
        const fail = (err: Error) => {
          off();
          reject(err);
        };
        r.once('readable', done);
        r.once('end', done);
        r.once('error', fail);
      });
    }
  };
}
