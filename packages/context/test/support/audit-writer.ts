/**
 * Child process of the audit multi-process test: one of several processes
 * appending to the same log at once, each with its own state-store handle.
 * argv: log directory, key file, state database, writer name, records
 * (0: until killed, after printing `ready`). Prints `{"appended":n}` when done.
 */
import { AuditTrail } from '../../src/safety/audit/audit-trail.ts';
import { SqliteStateStore } from '../../src/state/sqlite-store.ts';

const [dir, keyFile, db, name, countArg] = process.argv.slice(2) as [string, string, string, string, string];
const count = Number(countArg);
const store = await SqliteStateStore.open({ path: db });
const trail = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 64 * 1024 });
// The kill campaign waits for this; a counted run prints only its result.
if (count === 0) process.stdout.write('ready\n');
const big = 'x'.repeat(3000);
let appended = 0;
for (let i = 0; count === 0 || i < count; i++) {
  trail.append({
    op: 'readFile',
    opClass: 'read',
    paths: [`src/${name}-${i % 7}.ts`],
    sessionId: `session-${name}`,
    agent: `llm:${name}`,
    backend: 'host',
    user: 'dev',
    // Some records large enough that a kill can land inside their write.
    params: i % 5 === 0 ? { big } : { i },
    result: 'ok',
    durationMs: 1,
  });
  appended++;
  // Yield now and then, as a serving process does, so the processes interleave and the index's batches are written.
  if (i % 3 === 0) await new Promise((r) => setImmediate(r));
}
trail.close();
await store.close();
process.stdout.write(`${JSON.stringify({ appended })}\n`);
