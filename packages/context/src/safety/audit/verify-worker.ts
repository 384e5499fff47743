/**
 * The body of a verification worker (see `parallel-verify.ts`): verifies one
 * run of consecutive log files as a chain of its own, posts the report on its
 * port and counts itself done in the shared counter the caller waits on.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MessagePort, workerData } from 'node:worker_threads';

/** What the caller hands a worker. */
export interface VerifyWorkerData {
  readonly dir: string;
  readonly names: readonly string[];
  readonly key: Uint8Array;
  readonly port: MessagePort;
  /** Int32 [0]: workers finished. */
  readonly done: SharedArrayBuffer;
}

const data = workerData as VerifyWorkerData;
const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
try {
  // Loaded here, inside the try: a worker that cannot load still reports, so the caller never waits in vain.
  const { ChainKey } = (await import(`./chain-key${ext}`)) as typeof import('./chain-key.ts');
  const { verifyChain } = (await import(`./verify-chain${ext}`)) as typeof import('./verify-chain.ts');
  const key = new ChainKey(data.key);
  const report = verifyChain(
    data.names.map((name) => ({ name, bytes: () => readFileSync(join(data.dir, name)) })),
    key,
    undefined,
    { partial: true },
  );
  data.port.postMessage({ report });
} catch (err) {
  data.port.postMessage({ error: err instanceof Error ? err.message : String(err) });
} finally {
  const done = new Int32Array(data.done);
  Atomics.add(done, 0, 1);
  Atomics.notify(done, 0);
}
