/**
 * Verification of a large log on several cores. The log's files are split
 * into runs of consecutive files; each run is verified in a worker thread as
 * a chain of its own (its first file begins with an authenticated rotation
 * header, exactly like the first file kept after retention); the caller then
 * checks that each run's first header links to the end of the run before it.
 *
 * `verify()` stays synchronous: the calling thread blocks on a shared counter
 * (`Atomics.wait`) and reads the reports with `receiveMessageOnPort`. Any
 * doubt — a run that does not verify, a link that does not hold, an anchor in
 * the middle — returns `undefined`, and the caller runs the one-thread
 * verifier, which names the first bad line exactly.
 *
 * @module
 */

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { MessagePort, Worker } from 'node:worker_threads';
import type { ChainKey } from './chain-key.ts';
import { parseLine, readLineHead, storedMac, storedPrev } from './chain-line.ts';
import { type ChainAnchor, retentionDamage, type VerifyReport } from './verify-chain.ts';
import type { VerifyWorkerData } from './verify-worker.ts';

const WORKER_URL = new URL(`./verify-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
const WORKER_ARGV = import.meta.url.endsWith('.ts') ? ['--conditions=ctxfs-source'] : [];
/** A worker costs tens of milliseconds to start: below this much log, one thread is faster. */
export const PARALLEL_MIN_BYTES = 32 * 1024 * 1024;
const WAIT_MS = 10 * 60 * 1000;

/** Splits `sizes` into at most `parts` runs of consecutive items with about equal sums. */
function runs(sizes: readonly number[], parts: number): Array<[number, number]> {
  const total = sizes.reduce((a, b) => a + b, 0);
  const out: Array<[number, number]> = [];
  let start = 0;
  let acc = 0;
  for (let i = 0; i < sizes.length; i++) {
    acc += sizes[i] as number;
    const left = sizes.length - i - 1;
    const runsLeft = parts - out.length - 1;
    if (runsLeft > 0 && left >= runsLeft && acc >= (total * (out.length + 1)) / parts) {
      out.push([start, i + 1]);
      start = i + 1;
    }
  }
  if (start < sizes.length) out.push([start, sizes.length]);
  return out;
}

/**
 * Verifies the files `names` of `dir` with `workers` threads. Returns the
 * report of an intact log, or `undefined` when anything needs the exact,
 * one-thread verifier (including a log too small to be worth the threads).
 */
export function verifyParallel(
  dir: string,
  names: readonly string[],
  key: ChainKey,
  keyBytes: Uint8Array,
  anchor: ChainAnchor | undefined,
  workers: number,
  minBytes = PARALLEL_MIN_BYTES,
): VerifyReport | undefined {
  if (workers < 2 || names.length < 2) return undefined;
  const sizes = names.map((n) => statSync(join(dir, n)).size);
  if (sizes.reduce((a, b) => a + b, 0) < minBytes) return undefined;
  const parts = runs(sizes, Math.min(workers, names.length));
  return verifyInRuns(dir, names, parts, key, anchor, (groups) => onWorkers(dir, groups, keyBytes));
}

/**
 * The part of {@link verifyParallel} that does not depend on threads: `run`
 * verifies each run of files (`parts`, [start, end) indexes into `names`) as
 * a chain of its own; the runs' reports are then stitched. Exported so tests
 * can drive the stitching with many logs without starting threads.
 */
export function verifyInRuns(
  dir: string,
  names: readonly string[],
  parts: ReadonlyArray<readonly [number, number]>,
  key: ChainKey,
  anchor: ChainAnchor | undefined,
  run: (groups: ReadonlyArray<readonly string[]>) => ReadonlyArray<VerifyReport | undefined>,
): VerifyReport | undefined {
  const reports = run(parts.map(([a, b]) => names.slice(a, b)));
  if (reports.length !== parts.length || reports.some((r) => r === undefined || !r.ok)) return undefined;
  return stitch(dir, names, parts, reports as VerifyReport[], key, anchor);
}

/** Verifies each group of files on its own worker thread; the calling thread waits. */
function onWorkers(dir: string, groups: ReadonlyArray<readonly string[]>, keyBytes: Uint8Array): Array<VerifyReport | undefined> {
  // Loaded here, not at start: every command opens the audit trail, few verify it.
  const { MessageChannel, receiveMessageOnPort, Worker } = process.getBuiltinModule('node:worker_threads');
  const done = new SharedArrayBuffer(4);
  const started: Array<{ worker: Worker; port: MessagePort }> = [];
  try {
    for (const names of groups) {
      const { port1, port2 } = new MessageChannel();
      const wd: VerifyWorkerData = { dir, names, key: keyBytes, port: port2, done };
      const worker = new Worker(WORKER_URL, { workerData: wd, transferList: [port2], execArgv: WORKER_ARGV });
      worker.unref();
      started.push({ worker, port: port1 });
    }
    const counter = new Int32Array(done);
    const deadline = Date.now() + WAIT_MS;
    for (let c = Atomics.load(counter, 0); c < started.length; c = Atomics.load(counter, 0)) {
      if (Atomics.wait(counter, 0, c, Math.max(1, deadline - Date.now())) === 'timed-out') return [];
    }
    return started.map((s) => (receiveMessageOnPort(s.port)?.message as { report?: VerifyReport } | undefined)?.report);
  } finally {
    for (const s of started) {
      s.port.close();
      void s.worker.terminate();
    }
  }
}

/** The first 64 KiB of a file: enough for its header line. */
function readHead(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  } finally {
    closeSync(fd);
  }
}

/** Checks the links between runs, the anchor and retention; the combined report, or undefined. */
function stitch(
  dir: string,
  names: readonly string[],
  parts: ReadonlyArray<readonly [number, number]>,
  reports: readonly VerifyReport[],
  key: ChainKey,
  anchor: ChainAnchor | undefined,
): VerifyReport | undefined {
  const chain = reports[0]?.chain;
  for (let r = 1; r < reports.length; r++) {
    const before = reports[r - 1] as VerifyReport;
    const [a] = parts[r] as readonly [number, number];
    const name = names[a] as string;
    const buf = readHead(join(dir, name));
    const end = buf.indexOf(10);
    const head = end === -1 ? undefined : readLineHead(buf, 0, end);
    if (head === undefined || key.macHex(buf, 0, head.macInputEnd) !== storedMac(buf, head)) return undefined;
    const h = parseLine(buf, 0, end);
    if (h?.type !== 'rotate' || h.chain !== chain || h.prevFile !== names[a - 1]) return undefined;
    if (head.seq !== before.lastSeq + 1 || storedPrev(buf, head) !== before.lastMac) return undefined;
    if (reports[r]?.chain !== chain) return undefined;
  }
  const last = reports[reports.length - 1] as VerifyReport;
  if (anchor !== undefined && (anchor.chain !== chain || anchor.seq !== last.lastSeq || anchor.mac !== last.lastMac)) return undefined;
  // Retention reads only the newest file's header.
  const files = names.map((name) => ({ name, bytes: () => readHead(join(dir, name)) }));
  if (retentionDamage(files, key) !== undefined) return undefined;
  const sum = (f: (r: VerifyReport) => number) => reports.reduce((a, r) => a + f(r), 0);
  return {
    ok: true,
    records: sum((r) => r.records),
    entries: sum((r) => r.entries),
    files: names.length,
    repairs: sum((r) => r.repairs),
    lastSeq: last.lastSeq,
    lastMac: last.lastMac,
    ...(chain === undefined ? {} : { chain }),
    threads: reports.length,
  };
}
