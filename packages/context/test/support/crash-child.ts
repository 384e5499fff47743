/**
 * Child process of the crash test: edits two files in lockstep (each change
 * a two-file patch setting both counters to the same value, or a single-file
 * write) until it is SIGKILLed. argv: root, state database, host state dir, lock dir, audit trail dir.
 */
import { HostFilesystem } from '@ctxfs/host';
import { createContext } from '../../src/index.ts';

const [root, db, stateDir, lockDir, auditDir] = process.argv.slice(2) as [string, string, string, string, string];
// A fresh lock directory per child: the previous child's locks died with it.
const fs = await HostFilesystem.open({ root, stateDir, durability: 'none', locks: { dir: lockDir } });
const ctx = await createContext({
  fs,
  store: db,
  agent: 'tool:crash',
  // The tamper-evident copy of the audit, killed mid-write like everything else.
  safety: { policyFiles: false, auditTrail: { dir: auditDir, key: { keyFile: `${auditDir}.key` } } },
  // Widen the windows between the journal's steps so kills land inside them.
  edits: { crashHook: () => new Promise<void>((r) => setTimeout(r, Math.random() < 0.5 ? 0 : 2)) },
});
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const a = new TextDecoder().decode(await fs.readBytes('a.txt'));
  const n = Number(/n=(\d+)/.exec(a)?.[1] ?? 0);
  if (i % 3 === 2) {
    await ctx.writeFile('c.txt', `c=${i}\n`.repeat(1 + (i % 50)));
    continue;
  }
  const r = await ctx.applyPatch(`--- a/a.txt\n+++ b/a.txt\n@@ @@\n-n=${n}\n+n=${n + 1}\n--- a/b.txt\n+++ b/b.txt\n@@ @@\n-n=${n}\n+n=${n + 1}\n`, {
    message: `step ${n + 1}`,
  });
  if (!r.success) throw new Error(r.message);
}
