/**
 * Worker threads that hash files for `digest`. Hashing a tree is mostly
 * system calls (the guarded open, its procfs check, fstat, read, close) and
 * SHA-256, all synchronous: on the main thread they serialize, in workers
 * they run on every core while the caller's thread stays free. Each worker
 * has its own {@link RootGuard} over the same root, so every file is opened
 * and verified exactly as the main thread would.
 *
 * @module
 */

import type { Worker } from 'node:worker_threads';
import type { SymlinkPolicy } from './root-guard.ts';

/** One request to a worker: hash these normalized paths. */
export interface DigestRequest {
  readonly id: number;
  readonly paths: readonly string[];
  /** Per path: the caller wrote a trailing slash (must name a directory, so it cannot be hashed). */
  readonly dirOnly: readonly boolean[];
  readonly headBytes: number;
}

/** Why a path could not be hashed: an error's code and words. */
export interface WorkerFailure {
  readonly code: string;
  readonly reason: string | undefined;
  readonly hint: string | undefined;
}

/**
 * The digests of one request, packed in a few arrays rather than an object
 * a path: the receiving thread would rebuild those one by one, property by
 * property, and it is the thread that has the rest of a scan to do.
 */
export interface DigestAnswers {
  /** Per path: its size, or -1 when it failed (see `failures`). */
  readonly sizes: Float64Array;
  /** Per path, 64 characters each: its hex SHA-256 (filler where it failed). */
  readonly hashes: string;
  /** Per path, `headBytes` apart: its first `min(size, headBytes)` bytes. */
  readonly heads: Uint8Array;
  readonly headBytes: number;
  /** The paths that failed, by index. */
  readonly failures: ReadonlyArray<readonly [index: number, failure: WorkerFailure]>;
}

/** A worker's reply. */
export interface DigestReply extends DigestAnswers {
  readonly id: number;
}

/** A worker's first message: its script loaded and ran. */
export const WORKER_READY = 'ready';

/**
 * Why {@link DigestPool.run} failed: no worker could start (its script could
 * not be loaded, say, for lack of permission to read it, or threads are not
 * allowed). The pool stays unusable; the caller hashes on its own thread.
 */
export class WorkerStartError extends Error {
  readonly code = 'EWORKERSTART';
  override readonly name = 'WorkerStartError';
}

/** What a worker is started with. */
export interface DigestWorkerData {
  readonly rootReal: string;
  readonly policy: SymlinkPolicy;
}

interface Pending {
  readonly worker: Worker;
  resolve(answers: DigestAnswers): void;
  reject(err: Error): void;
}

// Run from TypeScript sources (the workspace's `ctxfs-source` condition), the
// worker must load its imports the same way.
const WORKER_URL = new URL(`./digest-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
const WORKER_ARGV = import.meta.url.endsWith('.ts') ? ['--conditions=ctxfs-source'] : [];

/** A lazily started pool of digest workers. */
export class DigestPool {
  readonly size: number;
  readonly #data: DigestWorkerData;
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #turn = 0;
  #closed = false;
  /** Set once a worker failed before it was ready: every later run fails with it at once. */
  #cannotStart: WorkerStartError | undefined;

  constructor(data: DigestWorkerData, size: number) {
    this.#data = data;
    this.size = size;
  }

  /** Hashes `paths` in one worker; results are in the order of `paths`. */
  run(paths: readonly string[], dirOnly: readonly boolean[], headBytes: number): Promise<DigestAnswers> {
    if (this.#closed) return Promise.reject(Object.assign(new Error('the digest workers were stopped'), { code: 'ECLOSED' }));
    if (this.#cannotStart) return Promise.reject(this.#cannotStart);
    while (this.#workers.length < this.size) this.#workers.push(this.#start());
    const worker = this.#workers[this.#turn++ % this.#workers.length] as Worker;
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { worker, resolve, reject });
      // Only requests in flight keep the process alive, not idle workers.
      worker.ref();
      worker.postMessage({ id, paths, dirOnly, headBytes } satisfies DigestRequest);
    });
  }

  #start(): Worker {
    // Loaded on first use, as the pool's first worker is made: a process that digests nothing big never pays for it.
    const worker = new (process.getBuiltinModule('node:worker_threads').Worker)(WORKER_URL, {
      workerData: this.#data satisfies DigestWorkerData,
      execArgv: WORKER_ARGV,
      // A worker keeps one buffer and allocates little else: a small young
      // generation saves about 20 MiB of resident memory per worker.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    worker.unref();
    let ready = false;
    worker.on('message', (reply: DigestReply | typeof WORKER_READY) => {
      if (reply === WORKER_READY) {
        ready = true;
        return;
      }
      const p = this.#pending.get(reply.id);
      if (!p) return;
      this.#pending.delete(reply.id);
      this.#settled(worker);
      p.resolve(reply);
    });
    const fail = (err: Error) => {
      // A worker that died takes its requests with it; the next run starts a new one.
      const i = this.#workers.indexOf(worker);
      if (i >= 0) this.#workers.splice(i, 1);
      // One that never got going will not do better next time: the pool gives up for good.
      if (!ready) this.#cannotStart ??= new WorkerStartError(`a digest worker could not start: ${err.message}`, { cause: err });
      const failure = this.#cannotStart ?? Object.assign(new Error(`a digest worker failed: ${err.message}`), { code: 'EIO', cause: err });
      for (const [id, p] of this.#pending) {
        if (p.worker !== worker) continue;
        this.#pending.delete(id);
        p.reject(failure);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.#closed) fail(new Error(`it exited with code ${code}`));
    });
    return worker;
  }

  #settled(worker: Worker): void {
    for (const p of this.#pending.values()) if (p.worker === worker) return;
    worker.unref();
  }

  /** Stops the workers; requests in flight fail with ECLOSED. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const p of this.#pending.values()) p.reject(Object.assign(new Error('the digest workers were stopped'), { code: 'ECLOSED' }));
    this.#pending.clear();
    await Promise.all(this.#workers.splice(0).map((w) => w.terminate()));
  }
}
