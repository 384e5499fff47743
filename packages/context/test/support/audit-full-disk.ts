/**
 * Child process of the audit full-disk test, run under a file-size limit
 * (`prlimit --fsize`): appends a few records, then a batch that cannot fit (1,000 records)
 * under the limit (the write fails with EFBIG), then one more record.
 * argv: log directory, key file, state database. Prints what happened as JSON.
 */
import { AuditTrail } from '../../src/safety/audit/audit-trail.ts';
import { SqliteStateStore } from '../../src/state/sqlite-store.ts';

// Past the limit the kernel sends SIGXFSZ, whose default ends the process: ignored, the write fails with EFBIG.
process.on('SIGXFSZ', () => {});
const [dir, keyFile, db] = process.argv.slice(2) as [string, string, string];
const store = await SqliteStateStore.open({ path: db });
const trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
const entry = (tag: string, params: Record<string, unknown>) =>
  ({
    op: 'readFile',
    opClass: 'read',
    paths: [`src/${tag}.ts`],
    sessionId: 's',
    agent: `llm:${tag}`,
    backend: 'host',
    user: 'dev',
    params,
    result: 'ok',
    durationMs: 1,
  }) as const;
for (let i = 0; i < 3; i++) trail.append(entry('before', { i }));
let failure: string | undefined;
try {
  trail.batch(() => {
    for (let i = 0; i < 1000; i++) trail.append(entry('batch', { i }));
  });
} catch (err) {
  failure = (err as { code?: string }).code;
}
trail.append(entry('after', {}));
const agents = trail.query({ limit: 1000 }).map((r) => r.agent);
trail.close();
await store.close();
process.stdout.write(`${JSON.stringify({ failure, agents })}\n`);
