/**
 * The trail's append thread, from the calling thread's side: batches of
 * committed entries are posted to a worker (`append-worker.ts`) that writes
 * their lines — serialization, MACs, the log's lock and the write — while
 * the caller goes on. The caller waits for what it posted (`take(true)`:
 * `Atomics.wait` on a shared counter, then `receiveMessageOnPort`) before it
 * touches the log itself, so the chain holds the lines in the order they
 * were handed over.
 *
 * @module
 */

import type { MessagePort, Worker } from 'node:worker_threads';
import { fsError } from '@ctxfs/core';
import { type AuditEntry, replayKey } from './audit-record.ts';
import type { FsyncPolicy, WriterView } from './chain-writer.ts';
import { entryJson } from './entry-writer.ts';
import type { AuditRemedies } from './remedies.ts';

const WORKER_URL = new URL(`./append-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
const WORKER_ARGV = import.meta.url.endsWith('.ts') ? ['--conditions=ctxfs-source'] : [];
/** Longer than the thread can wait for the log's lock (10 s): past it the thread is not answering. */
const WAIT_MS = 60_000;

/** What the calling thread hands the append thread. */
export interface AppendWorkerData {
  readonly dir: string;
  readonly key: Uint8Array;
  readonly maxFileBytes: number;
  readonly retainFiles: number;
  readonly fsync: FsyncPolicy;
  readonly remedies: AuditRemedies;
  /** Where the calling thread's writer stands: this one starts there. */
  readonly view: WriterView;
  /** Records others replayed that the calling thread took note of and has not appended itself. */
  readonly replayed: readonly string[];
  readonly port: MessagePort;
  /** Int32s at {@link STATE}'s places: whether it opened (1) or failed to (2), the id of the last batch handled, whether it closed. */
  readonly state: SharedArrayBuffer;
  readonly slots: typeof STATE;
  readonly lineFields: number;
}

/** Where in the shared state each word is. */
export const STATE = { ready: 0, done: 1, closed: 2 } as const;

/**
 * A batch to append — each entry's fields as JSON ({@link entryJson}) and
 * its {@link replayKey}, in order, up to the first entry that is not
 * well-formed (`refused`: why, reported as the batch's error once the lines
 * before it are appended) — or the order to close.
 */
export type AppendRequest =
  | { readonly id: number; readonly lines: readonly string[]; readonly keys: readonly string[]; readonly refused?: AppendReply['error'] }
  | { readonly close: true };

/** Fields of {@link AppendReply.lines} a line. */
export const LINE_FIELDS = 7;

/** What became of a batch. */
export interface AppendReply {
  readonly id: number;
  /**
   * Per line written: seq, time (ms), file number, line, byte offset, length
   * and the index of its entry in the batch ({@link LINE_FIELDS} numbers).
   * Entries others replayed have none.
   */
  readonly lines: Float64Array;
  /** The lines' MACs, 64 hex digits each, in order. */
  readonly macs: string;
  /** Retention deleted files: the seq of the oldest line kept. */
  readonly prunedBefore?: number;
  /** The thread could not open the log and appended nothing: the caller appends these entries itself. */
  readonly handedBack?: true;
  /** Why the batch (or opening the writer) failed; lines written before the failure are in `lines`. */
  readonly error?: { readonly message: string; readonly code?: string };
}

/** A batch the thread handled: its entries and what became of them. */
export interface AppendedBatch {
  readonly entries: readonly AuditEntry[];
  readonly reply: AppendReply;
}

/** The thread's state: starting, open (batches may be posted), or failed to open (its batches are handed back). */
export type AppendThreadStatus = 'starting' | 'open' | 'failed';

export class AppendThread {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #state: Int32Array;
  readonly #receive: (port: MessagePort) => { message: unknown } | undefined;
  /** Batches posted and not yet taken back, by id. */
  readonly #batches = new Map<number, readonly AuditEntry[]>();
  #posted = 0;
  #closed = false;

  private constructor(data: Omit<AppendWorkerData, 'port' | 'state' | 'slots' | 'lineFields'>) {
    // Loaded here, not at start: a short command never starts the thread.
    const { MessageChannel, receiveMessageOnPort, Worker } = process.getBuiltinModule('node:worker_threads');
    const state = new SharedArrayBuffer(12);
    const { port1, port2 } = new MessageChannel();
    const wd: AppendWorkerData = { ...data, port: port2, state, slots: STATE, lineFields: LINE_FIELDS };
    this.#worker = new Worker(WORKER_URL, { workerData: wd, transferList: [port2], execArgv: WORKER_ARGV });
    // Never what keeps a process running: close() waits for it, and a process that exits without closing leaves
    // the batch under way to the replay, as a killed one does.
    this.#worker.unref();
    this.#port = port1;
    this.#state = new Int32Array(state);
    this.#receive = receiveMessageOnPort;
  }

  /** Starts a thread writing to the log a writer of this process stands in (`data.view`). */
  static start(data: Omit<AppendWorkerData, 'port' | 'state' | 'slots' | 'lineFields'>): AppendThread {
    return new AppendThread(data);
  }

  get status(): AppendThreadStatus {
    const ready = Atomics.load(this.#state, STATE.ready);
    return ready === 1 ? 'open' : ready === 2 ? 'failed' : 'starting';
  }

  /** Whether batches were posted that have not been taken back. */
  get busy(): boolean {
    return this.#batches.size > 0;
  }

  /**
   * Posts a batch to append, in order after those posted before. Each entry
   * is serialized here, once: the thread seals the JSON as it is, and a
   * string costs the hand-over a copy where an entry's objects cost a
   * structured clone and their rebuilding on the other side (about 1.3
   * against 0.3 µs an entry to receive).
   */
  post(entries: readonly AuditEntry[]): void {
    const lines: string[] = [];
    const keys: string[] = [];
    let refused: AppendReply['error'];
    for (const e of entries) {
      try {
        lines.push(entryJson(e));
      } catch (err) {
        // As when the thread met it: the lines before it are appended, and the batch fails with its reason.
        const { message, code } = err as { message?: unknown; code?: unknown };
        refused = { message: String(message ?? err), ...(typeof code === 'string' ? { code } : {}) };
        break;
      }
      keys.push(replayKey(e.requestId, e.op, e.durationMs));
    }
    const id = ++this.#posted;
    this.#port.postMessage({ id, lines, keys, ...(refused === undefined ? {} : { refused }) } satisfies AppendRequest);
    this.#batches.set(id, entries);
  }

  /**
   * The batches the thread has handled, in the order they were posted; with
   * `wait`, once it has handled every one. A thread that failed to open hands
   * back every batch (`handedBack`).
   */
  take(wait: boolean): AppendedBatch[] {
    if (wait && this.#batches.size > 0) {
      const deadline = Date.now() + WAIT_MS;
      for (let done = Atomics.load(this.#state, STATE.done); done < this.#posted; done = Atomics.load(this.#state, STATE.done)) {
        if (Atomics.load(this.#state, STATE.ready) === 2) break;
        // A short wait while the thread starts: a failure to open is signalled on another word.
        const timeout = Atomics.load(this.#state, STATE.ready) === 0 ? 50 : Math.max(1, deadline - Date.now());
        if (Atomics.wait(this.#state, STATE.done, done, timeout) === 'timed-out' && Date.now() >= deadline) {
          throw fsError('EIO', 'audit', undefined, {
            reason: `the audit trail's append thread has not answered for ${WAIT_MS / 1000} s`,
            hint: 'the records it was handed are replayed from the state store when the trail is next opened',
          });
        }
      }
    }
    const out: AppendedBatch[] = [];
    for (let m = this.#receive(this.#port); m !== undefined; m = this.#receive(this.#port)) {
      const reply = m.message as AppendReply;
      const entries = this.#batches.get(reply.id);
      if (entries === undefined) continue;
      this.#batches.delete(reply.id);
      out.push({ entries, reply });
    }
    if (this.status === 'failed') {
      for (const [id, entries] of this.#batches) out.push({ entries, reply: { id, lines: new Float64Array(0), macs: '', handedBack: true } });
      this.#batches.clear();
    }
    return out;
  }

  /**
   * Closes the thread's writer (flushing the file as the trail's `fsync`
   * says) and waits until it has; the batches it has not handled are handed
   * back first (see {@link AppendThread.take}). Idempotent.
   */
  close(): AppendedBatch[] {
    if (this.#closed) return [];
    const rest = this.take(true);
    this.#closed = true;
    const deadline = Date.now() + WAIT_MS;
    // A thread still starting has the log's locks open, or soon will: it is closed as an open one is.
    while (Atomics.load(this.#state, STATE.ready) === 0 && Date.now() < deadline) Atomics.wait(this.#state, STATE.ready, 0, 1000);
    if (this.status === 'open') {
      this.#port.postMessage({ close: true } satisfies AppendRequest);
      while (Atomics.load(this.#state, STATE.closed) === 0 && Date.now() < deadline) Atomics.wait(this.#state, STATE.closed, 0, 1000);
    }
    this.#port.close();
    void this.#worker.terminate();
    return rest;
  }
}
