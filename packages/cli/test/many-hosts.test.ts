/**
 * Many hosts, one truth: four processes — each its own PostgreSQL pool and
 * its own connection to one container on the TLS engine, as agents on four
 * machines would be — run eight agent sessions each, reading, replacing,
 * patching and rewriting overlapping files at random for a fixed time, while
 * a writer outside ctxfs edits the same files with compare-and-swap. After:
 * no update of anyone is lost (every counter line holds exactly what its
 * writer's successful edits made it), every refusal was a reported conflict,
 * each file's history is linear (one version per applied edit, sequence
 * numbers without gap or repeat), and the counts reconcile: edits reported
 * applied = versions recorded = audit records of changes, no audit
 * record of a change lacks its versions, and the workspace's one audit
 * chain, which all four processes extended, verifies.
 */
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContainerFilesystem, connectEngine } from '@ctxfs/container';
import { createContext } from '@ctxfs/context';
import { isFsError } from '@ctxfs/core';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTestContainers, TEST_IMAGE, TEST_LABELS } from '../../container/test/docker-fixture.ts';
import { runWorker } from '../../context/test/support/run-worker.ts';
import { testSchemaName } from '../../context/test/support/test-state.ts';

const HOSTS = 4;
const SESSIONS = 8;
const FILES = 6;
const RUN_MS = 20_000;

const POSTGRES = process.env.CTXFS_TEST_POSTGRES_URL;
const TLS_HOST = process.env.CTXFS_TLS_ENGINE ?? 'tcp://127.0.0.1:23760';
const CERTS = join(process.env.CTXFS_TLS_DIR ?? '/var/lib/ctxfs-tls', 'client');
const TLS_ENV = { DOCKER_HOST: TLS_HOST, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: CERTS };
const here = dirname(fileURLToPath(import.meta.url));
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Whether the server and the engine are there; in CI their absence fails the run, never a silent skip. */
async function partsAvailable(): Promise<boolean> {
  let why: string | undefined;
  if (POSTGRES === undefined) why = 'CTXFS_TEST_POSTGRES_URL is not set';
  else {
    try {
      await connectEngine({ env: TLS_ENV }).getImage(TEST_IMAGE).inspect();
    } catch (err) {
      why = `TLS engine ${TLS_HOST} or image ${TEST_IMAGE} unavailable: ${(err as Error).message}`;
    }
  }
  if (why === undefined) return true;
  if (process.env.CI) throw new Error(`${why}. The many-hosts run must run in CI (bash .ci/system-deps.sh starts both; ./run-tests passes the URL).`);
  console.warn(`\n!! SKIPPING the many-hosts run: ${why}\n`);
  return false;
}

interface HostReport {
  host: number;
  sessions: Array<{ applied: number; merged: number; conflicts: number; reads: number; unremembered: number; counts: Record<string, number> }>;
}

function runHost(args: readonly string[]): Promise<HostReport> {
  return runWorker<HostReport>(join(here, 'support', 'many-hosts-worker.ts'), args);
}

const available = await partsAvailable();

describe.runIf(available)('many hosts over one PostgreSQL and one engine reached over TLS', () => {
  afterAll(() => removeTestContainers(connectEngine({ env: TLS_ENV })));

  it(`${HOSTS} processes × ${SESSIONS} sessions and an outside writer: nothing lost, history linear, counts reconciled`, { timeout: 240_000 }, async () => {
    const docker = connectEngine({ env: TLS_ENV });
    const container = await docker.createContainer({
      Image: TEST_IMAGE,
      Cmd: ['sh', '-c', 'while :; do sleep 3600; done'],
      name: `ctxfs-test-hosts-${randomBytes(4).toString('hex')}`,
      Labels: { ...TEST_LABELS },
    });
    await container.start();
    const engine = { host: TLS_HOST, certPath: CERTS };
    const fs = await ContainerFilesystem.open({ container: container.id, workdir: '/work', createWorkdir: true, engine });
    const paths = Array.from({ length: FILES }, (_, i) => `shared/f${i}.txt`);
    const owners = Array.from({ length: HOSTS }, (_, h) => Array.from({ length: SESSIONS }, (_, s) => `h${h}s${s}`)).flat();
    for (const p of paths) await fs.write(p, `${owners.map((o) => `${o}=0\n`).join('')}outside=0\n`, { createParents: true });
    const state = `${POSTGRES}${POSTGRES?.includes('?') ? '&' : '?'}schema=${testSchemaName('hosts_')}`;

    // The writer outside ctxfs: read, bump its own line, write only if the file is still what it read.
    const deadline = Date.now() + RUN_MS;
    const outside = Object.fromEntries(paths.map((p) => [p, 0]));
    const outsideWriter = (async () => {
      let raced = 0;
      while (Date.now() < deadline) {
        const p = paths[Math.floor(Math.random() * paths.length)] as string;
        const bytes = await fs.readBytes(p);
        const text = new TextDecoder().decode(bytes);
        const n = Number(/^outside=(\d+)$/m.exec(text)?.[1]);
        expect(n, `${p}: the outside writer's line`).toBe(outside[p]);
        try {
          await fs.writeBytes(p, new TextEncoder().encode(text.replace(`outside=${n}\n`, `outside=${n + 1}\n`)), { ifMatch: sha(bytes) });
          outside[p] = n + 1;
        } catch (err) {
          if (!isFsError(err, 'ECONFLICT')) throw err;
          raced++;
        }
        await new Promise((r) => setTimeout(r, 20 + Math.random() * 60));
      }
      return raced;
    })();
    const settled = await Promise.allSettled(
      Array.from({ length: HOSTS }, (_, h) => runHost([state, container.id, TLS_HOST, CERTS, String(h), String(SESSIONS), String(FILES), String(RUN_MS)])),
    );
    const outsideRaced = await outsideWriter;
    const reports = settled.map((s) => {
      if (s.status === 'rejected') throw s.reason;
      return s.value;
    });

    // Nothing lost: every line holds what its writer's successful edits made it.
    const applied = new Map<string, number>(paths.map((p) => [p, 0]));
    for (const p of paths) {
      const text = new TextDecoder().decode(await fs.readBytes(p));
      expect(text).toContain(`outside=${outside[p]}\n`);
      for (const r of reports) {
        r.sessions.forEach((s, i) => {
          const n = s.counts[p] ?? 0;
          expect(text, `${p}: h${r.host}s${i}`).toContain(`h${r.host}s${i}=${n}\n`);
          applied.set(p, (applied.get(p) ?? 0) + n);
        });
      }
    }
    const sessions = reports.flatMap((r) => r.sessions);
    const total = sessions.reduce((n, s) => n + s.applied, 0);
    const conflicts = sessions.reduce((n, s) => n + s.conflicts, 0);
    const merged = sessions.reduce((n, s) => n + s.merged, 0);

    const ctx = await createContext({ fs, store: state });
    try {
      expect(await ctx.journal.pending()).toEqual([]);
      let versions = 0;
      for (const p of paths) {
        await ctx.readFile(p); // notes the outside writer's last change, if ctxfs had not seen it yet
        const history = await ctx.history(p, 1_000_000);
        // Linear: sequence numbers from the newest down to 1, no gap, no repeat.
        expect(history.map((v) => v.seq)).toEqual(history.map((_, i) => history.length - i));
        const byAgents = history.filter((v) => v.op !== 'initial' && v.op !== 'external');
        expect(byAgents.length, `${p}: versions by agents`).toBe(applied.get(p));
        expect(history[0]?.sha256, `${p}: newest version is the disk`).toBe(sha(await fs.readBytes(p)));
        versions += byAgents.length;
      }
      expect(versions).toBe(total);
      const [changes] = await ctx.store.all<{ n: number }>('SELECT count(*) AS n FROM audit WHERE change_id IS NOT NULL');
      expect(Number(changes?.n)).toBe(total);
      const [orphans] = await ctx.store.all<{ n: number }>(
        'SELECT count(*) AS n FROM audit a WHERE a.change_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM history h WHERE h.change_id = a.change_id)',
      );
      expect(Number(orphans?.n)).toBe(0);
      // One audit chain for the workspace, every process's rows linked in the order the database took them.
      // The checker's own reads above may still be queued for the table: written first, so the count and the walk see the same rows.
      await ctx.store.flushAudit();
      const [rows] = await ctx.store.all<{ n: number }>('SELECT count(*) AS n FROM audit');
      expect(await ctx.store.verifyAudit()).toMatchObject({ ok: true, records: Number(rows?.n) });
      const outsideTotal = Object.values(outside).reduce((a, b) => a + b, 0);
      console.log(
        `[many hosts] ${HOSTS} processes × ${SESSIONS} sessions, ${RUN_MS / 1000} s: ${total} edits applied (${merged} merged), ${conflicts} conflicts reported, ${sessions.reduce((n, s) => n + s.reads, 0)} reads (${sessions.reduce((n, s) => n + s.unremembered, 0)} whose version changed before the context could keep it); outside writer ${outsideTotal} writes, ${outsideRaced} lost races to ctxfs`,
      );
      // The run really interleaved: edits met each other and the outside writer.
      expect(total).toBeGreaterThan(HOSTS * SESSIONS);
      expect(merged + conflicts).toBeGreaterThan(0);
      expect(outsideTotal).toBeGreaterThan(0);
    } finally {
      await ctx.close();
      await fs.close();
    }
  });
});
