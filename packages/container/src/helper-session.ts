/**
 * The fast path: one long-lived `exec` of the image's `sh` running the
 * helper loop ({@link HELPER_SCRIPT}), with stdin and stdout attached. An
 * operation costs one request line and one framed response over an open
 * connection (about a quarter of a millisecond for shell builtins) instead
 * of an exec create/start/inspect round trip (tens of milliseconds).
 *
 * Requests are pipelined: each is written as soon as it is made and the
 * responses come back in order, so concurrent callers share the round trip.
 *
 * A session that owes answers and receives nothing for `timeoutMs` (a
 * paused or wedged container, an engine that stopped forwarding) is ended
 * as lost: every waiting request fails at once and the next call starts a
 * new session, which is how a paused container's filesystem recovers when
 * it is unpaused. The clock restarts with every byte that arrives, so a long
 * answer that keeps streaming is never cut.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { within } from './deadline.ts';
import { FrameDemuxer, STDERR } from './frame-demuxer.ts';
import { HELPER_SCRIPT } from './helper-script.ts';

/** One response of the helper. */
export interface HelperResponse {
  /** Exit status of the request's code. */
  readonly status: number;
  /** Everything the request wrote to stdout. */
  readonly stdout: Buffer;
  /** Everything it wrote to stderr. */
  readonly stderr: string;
}

/** The session's transport failed: the container stopped, the engine went away. */
export class SessionLostError extends Error {
  readonly lost = true;
}

/** The session owed an answer and heard nothing for its timeout. */
export class SessionTimeoutError extends SessionLostError {
  readonly timedOut = true;
}

/** Default of {@link HelperSessionOptions.timeoutMs}. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** Options of {@link HelperSession.start}. */
export interface HelperSessionOptions {
  /**
   * Silence, in ms, after which a session owing answers is declared lost
   * (and starting a session that long is a failure). Default 15,000.
   */
  timeoutMs?: number;
  /** Called once when the session is lost. */
  onLost?: (err: Error) => void;
}

interface Pending {
  readonly id: number;
  readonly resolve: (r: HelperResponse) => void;
  readonly reject: (err: Error) => void;
  out: Buffer[];
  outDone: boolean;
  status: number;
  err: Buffer[];
  errDone: boolean;
}

/**
 * The bytes of one output channel, kept as a list of chunks so a large
 * response (a batch of files) is searched and copied once, not once per frame.
 */
class ChunkQueue {
  #chunks: Buffer[] = [];
  #length = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  get length(): number {
    return this.#length;
  }

  /** Bytes [start, end). */
  slice(start: number, end: number): Buffer {
    const parts: Buffer[] = [];
    let pos = 0;
    for (const c of this.#chunks) {
      const cs = pos;
      pos += c.length;
      if (pos > start && cs < end) parts.push(c.subarray(Math.max(0, start - cs), Math.min(c.length, end - cs)));
      if (pos >= end) break;
    }
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  }

  /** Absolute index of `needle` at or after `from`, or -1. */
  indexOf(needle: Buffer | number, from: number): number {
    if (from >= this.#length) return -1;
    const i = this.slice(from, this.#length).indexOf(needle);
    return i < 0 ? -1 : from + i;
  }

  /** Drops the first `n` bytes. */
  consume(n: number): void {
    this.#length -= n;
    while (n > 0) {
      const first = this.#chunks[0] as Buffer;
      if (first.length <= n) {
        n -= first.length;
        this.#chunks.shift();
      } else {
        this.#chunks[0] = first.subarray(n);
        n = 0;
      }
    }
  }
}

/**
 * A running helper loop inside one container.
 *
 * @example
 * ```ts
 * const session = await HelperSession.start(container, '/work');
 * const { status, stdout } = await session.request(`ST ${shellQuote('a.txt')}`);
 * ```
 */
export class HelperSession {
  readonly nonce: string;
  #socket: Duplex;
  #pending: Pending[] = [];
  #nextId = 1;
  #lost: Error | undefined;
  #out = new ChunkQueue();
  #err = new ChunkQueue();
  /** Scan position hints so a large response is not searched from the start each chunk. */
  #outScanFrom = 0;
  #errScanFrom = 0;
  readonly #onLost: (err: Error) => void;
  readonly #timeoutMs: number;
  #heardAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  private constructor(socket: Duplex, nonce: string, timeoutMs: number, onLost: (err: Error) => void) {
    this.#socket = socket;
    this.nonce = nonce;
    this.#timeoutMs = timeoutMs;
    this.#onLost = onLost;
    const demux = new FrameDemuxer();
    socket.on('data', (chunk: Buffer) => {
      this.#heardAt = performance.now();
      demux.push(chunk, (stream, part) => (stream === STDERR ? this.#err : this.#out).push(part));
      this.#drain();
    });
    const fail = (err?: unknown) => this.#fail(err instanceof Error ? err : new SessionLostError('the helper session ended'));
    socket.on('end', () => fail());
    socket.on('close', () => fail());
    socket.on('error', (err: Error) => fail(err));
  }

  /**
   * Starts the helper loop in `container` with workspace root `root`; an
   * engine that does not set it up within the timeout fails with a
   * {@link SessionTimeoutError}.
   */
  static async start(container: Docker.Container, root: string, options: HelperSessionOptions = {}): Promise<HelperSession> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const nonce = randomBytes(12).toString('hex');
    const attach = async () => {
      const exec = await container.exec({
        Cmd: ['sh', '-c', HELPER_SCRIPT, 'ctxfs-helper', root, nonce],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        WorkingDir: '/',
      });
      return (await exec.start({ hijack: true, stdin: true })) as unknown as Duplex;
    };
    // A connection that arrives after the timeout is nobody's: close it.
    const socket = await within(
      attach(),
      timeoutMs,
      () => new SessionTimeoutError(`starting the helper session: no answer within ${timeoutMs} ms`),
      (late) => late.destroy(),
    );
    return new HelperSession(socket, nonce, timeoutMs, options.onLost ?? (() => {}));
  }

  /** Whether the transport is gone. */
  get lost(): boolean {
    return this.#lost !== undefined;
  }

  /**
   * Runs `code` (one line of shell, paths already quoted) and resolves with
   * its status and output. `input` bytes follow the line on stdin, for
   * requests that read exactly that many bytes.
   */
  request(code: string, input?: Uint8Array): Promise<HelperResponse> {
    if (this.#lost) return Promise.reject(this.#lost);
    const id = this.#nextId++;
    return new Promise<HelperResponse>((resolve, reject) => {
      this.#pending.push({ id, resolve, reject, out: [], outDone: false, status: 0, err: [], errDone: false });
      const line = Buffer.from(`${id} ${code}\n`);
      this.#socket.write(input && input.byteLength > 0 ? Buffer.concat([line, input]) : line);
      // The first answer owed starts the clock; later ones queue behind it.
      if (this.#pending.length === 1) this.#heardAt = performance.now();
      if (this.#timer === undefined) this.#arm(this.#timeoutMs);
    });
  }

  /** Checks for silence `ms` from now, while answers are owed. */
  #arm(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#lost || this.#pending.length === 0) return;
      const silent = performance.now() - this.#heardAt;
      if (silent >= this.#timeoutMs) {
        this.#fail(new SessionTimeoutError(`the helper session gave no answer for ${Math.round(silent)} ms`));
      } else {
        this.#arm(this.#timeoutMs - silent);
      }
    }, ms);
    this.#timer.unref();
  }

  #drain(): void {
    for (;;) {
      const head = this.#pending[0];
      if (head === undefined) {
        // Output without a request (should not happen): keep it bounded.
        return;
      }
      if (!head.outDone) {
        const marker = Buffer.from(`\x1e${this.nonce}:${head.id}:`);
        const at = this.#out.indexOf(marker, Math.max(0, this.#outScanFrom - marker.length + 1));
        if (at < 0) {
          this.#outScanFrom = this.#out.length;
        } else {
          const nl = this.#out.indexOf(0x0a, at + marker.length);
          if (nl < 0) {
            this.#outScanFrom = at;
          } else {
            head.out.push(this.#out.slice(0, at));
            head.status = Number(this.#out.slice(at + marker.length, nl).toString('latin1'));
            head.outDone = true;
            this.#out.consume(nl + 1);
            this.#outScanFrom = 0;
          }
        }
      }
      if (!head.errDone) {
        const marker = Buffer.from(`\x1e${this.nonce}:${head.id}\n`);
        const at = this.#err.indexOf(marker, Math.max(0, this.#errScanFrom - marker.length + 1));
        if (at < 0) {
          this.#errScanFrom = this.#err.length;
        } else {
          head.err.push(this.#err.slice(0, at));
          head.errDone = true;
          this.#err.consume(at + marker.length);
          this.#errScanFrom = 0;
        }
      }
      if (!(head.outDone && head.errDone)) return;
      this.#pending.shift();
      head.resolve({ status: head.status, stdout: Buffer.concat(head.out), stderr: Buffer.concat(head.err).toString('utf8') });
    }
  }

  #fail(err: Error): void {
    if (this.#lost) return;
    this.#stopTimer();
    this.#lost = err instanceof SessionLostError ? err : Object.assign(new SessionLostError(err.message), { cause: err });
    const pending = this.#pending.splice(0);
    for (const p of pending) p.reject(this.#lost);
    this.#socket.destroy();
    this.#onLost(this.#lost);
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Ends the loop (closing its stdin) and the connection. */
  close(): void {
    if (this.#lost) return;
    this.#stopTimer();
    this.#lost = new SessionLostError('the helper session was closed');
    for (const p of this.#pending.splice(0)) p.reject(this.#lost);
    this.#socket.end();
    this.#socket.destroy();
  }
}
