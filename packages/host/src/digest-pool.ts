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

import { Worker } from 'node:worker_threads';
import type { SymlinkPolicy } from './root-guard.ts';

/** One request to a worker: hash these normalized paths. */
export interface DigestRequest {
  readonly id: number;
  readonly paths: readonly string[];
  /** Per path: the caller wrote a trailing slash (must name a directory, so it cannot be hashed). */
  readonly dirOnly: readonly boolean[];
  readonly headBytes: number;
}

/** A worker's answer for one path: a digest, or an error's code and words. */
export type WorkerDigest =
  | { readonly size: number; readonly sha256: string; readonly head: Uint8Array | undefined }
  | { readonly code: string; readonly reason: string | undefined; readonly hint: string | undefined };

/** A worker's reply. */
export interface DigestReply {
  readonly id: number;
  readonly results: readonly WorkerDigest[];
}

/** What a worker is started with. */
export interface DigestWorkerData {
  readonly rootReal: string;
  readonly policy: SymlinkPolicy;
}

interface Pending {
  readonly worker: Worker;
  resolve(results: readonly WorkerDigest[]): void;
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

  constructor(data: DigestWorkerData, size: number) {
    this.#data = data;
    this.size = size;
  }

  /** Hashes `paths` in one worker; results are in the order of `paths`. */
  run(paths: readonly string[], dirOnly: readonly boolean[], headBytes: number): Promise<readonly WorkerDigest[]> {
    if (this.#closed) return Promise.reject(Object.assign(new Error('the digest workers were stopped'), { code: 'ECLOSED' }));
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
    const worker = new Worker(WORKER_URL, {
      workerData: this.#data satisfies DigestWorkerData,
      execArgv: WORKER_ARGV,
      // A worker keeps one buffer and allocates little else: a small young
      // generation saves about 20 MiB of resident memory per worker.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    worker.unref();
    worker.on('message', (reply: DigestReply) => {
      const p = this.#pending.get(reply.id);
      if (!p) return;
      this.#pending.delete(reply.id);
      this.#settled(worker);
      p.resolve(reply.results);
    });
    const fail = (err: Error) => {
      // A worker that died takes its requests with it; the next run starts a new one.
      const i = this.#workers.indexOf(worker);
      if (i >= 0) this.#workers.splice(i, 1);
      for (const [id, p] of this.#pending) {
        if (p.worker !== worker) continue;
        this.#pending.delete(id);
        p.reject(Object.assign(new Error(`a digest worker failed: ${err.message}`), { code: 'EIO', cause: err }));
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
