/**
 * The body of the trail's append thread (see `append-thread.ts`): a second
 * writer on the log the calling thread has open, which appends the batches
 * of committed entries it is posted (their fields serialized by the caller,
 * sealed here as they are), each in one hold of the log's lock, as
 * another process would — catching up first with what others appended, and
 * skipping the records they replayed. For each batch it posts where its
 * lines went (for the caller's index) and counts itself done in the shared
 * counter the caller waits on before it appends, reads or closes anything
 * itself.
 *
 * @module
 */

import { workerData } from 'node:worker_threads';
import type { AppendReply, AppendRequest, AppendWorkerData } from './append-thread.ts';

const data = workerData as AppendWorkerData;
const state = new Int32Array(data.state);
const { ready: STATE_READY, done: STATE_DONE, closed: STATE_CLOSED } = data.slots;
const LINE_FIELDS = data.lineFields;
const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

function failure(err: unknown): NonNullable<AppendReply['error']> {
  const e = err as { message?: unknown; code?: unknown };
  return { message: String(e?.message ?? err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
}

function signal(index: number, value: number): void {
  Atomics.store(state, index, value);
  Atomics.notify(state, index);
}

try {
  // Loaded here, inside the try: a thread that cannot load still reports, so the caller never waits in vain.
  const { ChainKey } = (await import(`./chain-key${ext}`)) as typeof import('./chain-key.ts');
  const { ChainWriter } = (await import(`./chain-writer${ext}`)) as typeof import('./chain-writer.ts');
  const { noteReplays } = (await import(`./audit-record${ext}`)) as typeof import('./audit-record.ts');
  const replayed = new Set(data.replayed);
  let prunedBefore: number | undefined;
  const writer = ChainWriter.from(
    {
      dir: data.dir,
      key: new ChainKey(data.key),
      maxFileBytes: data.maxFileBytes,
      retainFiles: data.retainFiles,
      fsync: data.fsync,
      remedies: data.remedies,
      onPrune: (seq) => {
        prunedBefore = seq;
      },
      onForeignLines: (lines) => noteReplays(lines, replayed),
    },
    data.view,
  );
  const append = (id: number, entries: readonly string[], keys: readonly string[], refused: AppendReply['error']): AppendReply => {
    const lines: number[] = [];
    const macs: string[] = [];
    let error: AppendReply['error'];
    prunedBefore = undefined;
    try {
      writer.locked(() => {
        entries.forEach((json, i) => {
          // Under the lock, the writer has caught up with every line appended before this one.
          if (replayed.size > 0 && replayed.delete(keys[i] as string)) return;
          const line = writer.append('entry', () => json);
          lines.push(line.seq, Date.parse(line.ts), line.fileNo, line.line, line.offset, line.length, i);
          macs.push(line.mac);
        });
      });
    } catch (err) {
      error = failure(err);
    }
    error ??= refused;
    // The lines of a hold reach the file when it ends: those past what was written are not in the log.
    let kept = 0;
    while (kept * LINE_FIELDS < lines.length && (lines[kept * LINE_FIELDS] as number) <= writer.writtenSeq) kept++;
    return {
      id,
      lines: Float64Array.from(lines.slice(0, kept * LINE_FIELDS)),
      macs: macs.slice(0, kept).join(''),
      ...(prunedBefore === undefined ? {} : { prunedBefore }),
      ...(error === undefined ? {} : { error }),
    };
  };
  signal(STATE_READY, 1);
  data.port.on('message', (req: AppendRequest) => {
    if ('close' in req) {
      try {
        writer.close();
      } finally {
        data.port.close();
        signal(STATE_CLOSED, 1);
      }
      return;
    }
    data.port.postMessage(append(req.id, req.lines, req.keys, req.refused));
    signal(STATE_DONE, req.id);
  });
} catch (err) {
  data.port.postMessage({ id: 0, lines: new Float64Array(0), macs: '', error: failure(err) } satisfies AppendReply);
  data.port.close();
  signal(STATE_READY, 2);
  signal(STATE_CLOSED, 1);
}
