/**
 * Child process of the audit crash test: appends records — some of them
 * large, so a kill can land inside a write — with a small file size and
 * retention, so kills also land in rotations and pruning, until SIGKILLed.
 * argv: log directory, key file, state database.
 */
import { AuditTrail } from '../../src/safety/audit/audit-trail.ts';
import { SqliteStateStore } from '../../src/state/sqlite-store.ts';

const [dir, keyFile, db] = process.argv.slice(2) as [string, string, string];
const store = await SqliteStateStore.open({ path: db });
const trail = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 192 * 1024, retainFiles: 4 });

// 5,000 strings under the elision limit: cheap to serialize, so a large part of the time goes to writing.
const lines = Array.from({ length: 5000 }, (_, k) => `${k}:${'x'.repeat(240)}`);
for (let i = 0; ; i++) {
  trail.append({
    op: i % 2 === 0 ? 'readFile' : 'applyPatch',
    opClass: i % 2 === 0 ? 'read' : 'write',
    paths: [`src/f${i % 17}.ts`],
    sessionId: `s${process.pid}`,
    agent: 'llm:crash',
    backend: 'host',
    user: 'dev',
    // Every fourth record is ~1.2 MB: a write that size can be cut by the kill.
    params: i % 4 === 0 ? { lines } : { i },
    result: 'ok',
    durationMs: 1,
  });
  // Ready once a record is in: each round then adds at least one, however slowly a loaded machine runs the child.
  if (i === 0) process.stdout.write('ready\n');
  // Let the index's batch be written now and then, as a serving process would.
  if (i % 20 === 0) await new Promise((r) => setImmediate(r));
}
