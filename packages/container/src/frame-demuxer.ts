/**
 * Docker's attach stream carries stdout and stderr on one connection, in
 * frames of an 8-byte header (stream id, then payload size, big-endian) and a
 * payload. Frames and headers split anywhere across TCP chunks.
 *
 * @module
 */

/** Stream ids of a frame header. */
export const STDOUT = 1;
export const STDERR = 2;

/**
 * Incremental demultiplexer: feed it the connection's chunks; it hands out
 * payload slices with their stream id.
 *
 * @example
 * ```ts
 * const demux = new FrameDemuxer();
 * socket.on('data', (chunk) => demux.push(chunk, (stream, part) => (stream === STDERR ? err : out).push(part)));
 * ```
 */
export class FrameDemuxer {
  #header: Buffer = Buffer.alloc(0);
  #remaining = 0;
  #stream = STDOUT;

  /** Feeds one chunk; `onPart` receives each payload slice (a view into `chunk`). */
  push(chunk: Buffer, onPart: (stream: number, part: Buffer) => void): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#remaining === 0) {
        const need = 8 - this.#header.length;
        const piece = chunk.subarray(at, at + need);
        this.#header = this.#header.length === 0 ? piece : Buffer.concat([this.#header, piece]);
        at += piece.length;
        if (this.#header.length < 8) return;
        this.#stream = this.#header[0] ?? STDOUT;
        this.#remaining = this.#header.readUInt32BE(4);
        this.#header = Buffer.alloc(0);
        continue;
      }
      const take = Math.min(this.#remaining, chunk.length - at);
      const part = chunk.subarray(at, at + take);
      at += take;
      this.#remaining -= take;
      onPart(this.#stream, part);
    }
  }
}
