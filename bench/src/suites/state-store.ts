/**
 * The PostgreSQL state store beside SQLite, in one run (issue 21, "Measures"):
 *
 * - context-layer operations, PostgreSQL over its Unix socket (subject)
 *   against a SQLite file in a temp dir (baseline), each context on its own
 *   host workspace: a 1 KB `readFile`, a `replace` and an `applyPatch` of one
 *   line in a 1 KB file, and one audit append (`store.audit`: one chained
 *   row in a transaction of its own). Goal ≤ 2.00x each. The note under each
 *   row counts the statements PostgreSQL was sent per call and the round
 *   trips the call waited for;
 * - 1, 2, 4 and 8 processes (state-store-edit-process.mjs), each its own
 *   context and pool on one shared host workspace, replacing lines of 8
 *   shared files for a fixed time: edits/s of all processes together and each
 *   edit's p50/p99 latency, PostgreSQL beside SQLite at each count. Goals
 *   (PostgreSQL): p99 < 25 ms at 8 processes; edits/s not falling as
 *   processes are added;
 * - the registry's first scan of the 34k-file corpus (corpus.ts) into a new
 *   PostgreSQL schema against a new SQLite file: goal ≤ 1.50x;
 * - optional: today's SQLite store beside the build of commit 86aa71a (before
 *   the async `StateStore` port) on a 1 KB read, a replace and the first
 *   scan, each side in processes of its own, when `CTXFS_BENCH_BEFORE_ASYNC`
 *   names that build's checkout; else not-run. Goal ≤ 1.05x (no slower, past noise).
 *
 * The server is `CTXFS_BENCH_POSTGRES_URL`, else `CTXFS_TEST_POSTGRES_URL`,
 * else the CI server's socket (`.ci/system-deps.sh` starts it); without one
 * the suite is not-run. Every schema it makes is named
 * `ctxfs_bench_ss_<pid>_<n>` and dropped after its case, failed or not; a run
 * killed midway leaves its schemas, which the next run drops (their pid is
 * gone).
 *
 * Not a plain `defineSuite`: the per-operation and scan cases run through the
 * harness (side by side, alternating rounds), the many-processes figures are
 * distributions over child processes and the before/after figures come from
 * processes of their own, so the suite builds those rows itself, in the same
 * shapes, as watch.ts does.
 *
 * @module
 */

import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ContextLayer, createContext, FileRegistry, openStateStore, type StateStore } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import type pg from 'pg';
import { countRoundTrips } from '../../../packages/context/test/support/pg-round-trips.ts';
import { nodeModulesCorpus } from '../corpus.ts';
import {
  type Case,
  type CaseResult,
  type Comparison,
  DEFAULT_RUN_OPTIONS,
  defineSuite,
  environment,
  quantile,
  type RunOptions,
  type SideStats,
  type SingleResult,
  type Suite,
  type SuiteResult,
  SuiteSkip,
  skipSuite,
  writeResults,
} from '../harness.ts';
import { UNSPENT_PROFILE } from '../tools/unspent-profile.ts';

const CI_URL = 'postgres://ctxfs@/ctxfs?host=/var/tmp/ctxfs-pg/socket';
const SCHEMA_PREFIX = 'ctxfs_bench_ss_';
const OPS_TARGET = 2.0;
const SCAN_TARGET = 1.5;
const BEFORE_TARGET = 1.05;
const PROCESS_COUNTS = [1, 2, 4, 8] as const;
const P99_GOAL_MS = 25;
/** Edits/s at a count may be this much below the count before it and still "not fall": run-to-run noise. */
const THROUGHPUT_NOISE = 0.05;
/** Shared files the processes edit. */
const SHARED_FILES = 8;
const BEFORE_COMMIT = '86aa71a';
const EDIT_WORKER = join(import.meta.dirname, '..', 'state-store-edit-process.mjs');
const SQLITE_WORKER = join(import.meta.dirname, '..', 'state-store-sqlite-process.mjs');

// The `pg` the context layer runs on (the same module instance), to count the statements it sends.
const contextPg = createRequire(import.meta.resolve('@ctxfs/context'))('pg') as typeof pg;

/** The server to measure, from the environment or the CI default. */
function postgresUrl(): string {
  return process.env.CTXFS_BENCH_POSTGRES_URL ?? process.env.CTXFS_TEST_POSTGRES_URL ?? CI_URL;
}

const withSchema = (url: string, schema: string) => `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;

/** The schemas this run makes: named by its pid, each dropped after its case, all of them at the end. */
class Schemas {
  readonly #admin: pg.Client;
  readonly #url: string;
  readonly #made = new Set<string>();
  #n = 0;

  constructor(admin: pg.Client, url: string) {
    this.#admin = admin;
    this.#url = url;
  }

  /** A new schema's name and the store URL naming it (the store makes it on open). */
  next(): { name: string; url: string } {
    const name = `${SCHEMA_PREFIX}${process.pid}_${++this.#n}`;
    this.#made.add(name);
    return { name, url: withSchema(this.#url, name) };
  }

  async drop(name: string): Promise<void> {
    await this.#admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    this.#made.delete(name);
  }

  async dropAll(): Promise<void> {
    for (const name of [...this.#made]) await this.drop(name);
  }

  /** Schemas left by runs of this suite that were killed (their process is gone). */
  async dropStale(): Promise<number> {
    const { rows } = await this.#admin.query<{ name: string }>('SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1)', [SCHEMA_PREFIX]);
    let dropped = 0;
    for (const { name } of rows) {
      const pid = Number(/^ctxfs_bench_ss_(\d+)_/.exec(name)?.[1]);
      if (pid === process.pid || alive(pid)) continue;
      await this.#admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      dropped++;
    }
    return dropped;
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The admin connection, or not-run when no server answers. */
async function connect(url: string): Promise<pg.Client> {
  const client = new contextPg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    throw skipSuite(`no PostgreSQL at ${url} (${(err as Error).message}): run \`bash .ci/system-deps.sh\` or set CTXFS_BENCH_POSTGRES_URL`);
  }
}

/** The server's version and the settings that decide what a commit costs, for the notes. */
async function serverSettings(admin: pg.Client): Promise<string> {
  const { rows } = await admin.query<{ name: string; setting: string }>(
    "SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'shared_buffers')",
  );
  const v = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  const waits = v.fsync === 'on' && v.synchronous_commit !== 'off';
  return `server: PostgreSQL ${v.server_version}, fsync ${v.fsync}, synchronous_commit ${v.synchronous_commit}; SQLite: WAL, synchronous NORMAL (${waits ? 'PostgreSQL waits for its log on disk at each commit, SQLite does not' : 'neither waits for the disk at commit'})`;
}

/**
 * Host lock directories live outside the workspace (`/dev/shm/ctxfs-<uid>/<hash
 * of the root>`, see @ctxfs/host locks.ts); removed with the workspace.
 */
function removeWorkspace(dir: string, roots: readonly string[]): void {
  const uid = process.getuid?.() ?? 0;
  for (const root of roots) {
    try {
      const id = createHash('sha256').update(realpathSync(root)).digest('hex').slice(0, 24);
      rmSync(`/dev/shm/ctxfs-${uid}/${id}`, { recursive: true, force: true });
    } catch {
      // Never created.
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

/** 1,024 bytes: 16 lines of 64. */
function kilobyte(name: string): string {
  return Array.from({ length: 16 }, (_, i) => `${name} line ${String(i).padStart(2, '0')} `.padEnd(63, 'x')).join('\n') + '\n';
}

/** A host workspace `<dir>/ws` with the host's state beside it, holding `files`. */
async function workspace(dir: string, files: Record<string, string>): Promise<{ root: string; stateDir: string; fs: HostFilesystem }> {
  const root = join(dir, 'ws');
  const stateDir = join(dir, 'host-state');
  mkdirSync(root, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return { root, stateDir, fs: await HostFilesystem.open({ root, stateDir }) };
}

/**
 * Statements and transactions the context's `pg` sends per call of `fn`, over
 * `calls` calls, counted until each call returns, and the round trips the
 * call waits for: a statement sent while another is unanswered shares its
 * round trip (the pool's connections pipeline), one sent when every statement
 * before it is answered starts one.
 */
async function countStatements(fn: () => Promise<unknown>, calls: number): Promise<{ statements: number; waited: number; transactions: number }> {
  const { statements, waited } = await countRoundTrips(contextPg, async () => {
    for (let i = 0; i < calls; i++) await fn();
  });
  const transactions = statements.filter((text) => /^\s*BEGIN\b/i.test(text)).length;
  return { statements: statements.length / calls, waited: waited / calls, transactions: transactions / calls };
}

const round1 = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

// ------------------------------------------------------------------ per operation

interface OpsEnv {
  readonly dir: string;
  readonly roots: string[];
  readonly schema: string;
  readonly pg: { ctx: ContextLayer; fs: HostFilesystem };
  readonly sqlite: { ctx: ContextLayer; fs: HostFilesystem };
}

/** Flips one line of `path` back and forth with `replace`; throws unless it applied. */
function replaceToggle(ctx: ContextLayer, path: string, line: string): () => Promise<unknown> {
  let forward = true;
  return async () => {
    const [from, to] = forward ? [`${line}x`, `${line}y`] : [`${line}y`, `${line}x`];
    const r = await ctx.replace(path, from, to);
    if (!r.success) throw new Error(`replace: ${r.code}: ${r.message}`);
    forward = !forward;
    return r;
  };
}

/** Flips one line of `path` back and forth with a one-hunk patch (one line changed, one of context each side). */
function patchToggle(ctx: ContextLayer, path: string, text: string): () => Promise<unknown> {
  const lines = text.split('\n');
  const [before, line, after] = [lines[6] as string, lines[7] as string, lines[8] as string];
  const changed = `${line.slice(0, -1)}y`;
  const patch = (from: string, to: string) => `--- a/${path}\n+++ b/${path}\n@@ -7,3 +7,3 @@\n ${before}\n-${from}\n+${to}\n ${after}\n`;
  const forward = patch(line, changed);
  const reverse = patch(changed, line);
  let fwd = true;
  return async () => {
    const r = await ctx.applyPatch(fwd ? forward : reverse);
    if (!r.success) throw new Error(`applyPatch: ${r.code}: ${r.message}`);
    fwd = !fwd;
    return r;
  };
}

function opsSuite(base: string, schemas: Schemas, server: string): Suite {
  const files = { 'read.txt': kilobyte('read'), 'replace.txt': kilobyte('replace'), 'patch.txt': kilobyte('patch') };
  return defineSuite<OpsEnv>({
    name: 'state-store',
    async setup() {
      const dir = mkdtempSync(join(base, 'ops-'));
      const roots: string[] = [];
      const { name, url } = schemas.next();
      try {
        const pgWs = await workspace(join(dir, 'pg'), files);
        roots.push(pgWs.root);
        const sqWs = await workspace(join(dir, 'sqlite'), files);
        roots.push(sqWs.root);
        const pgCtx = await createContext({ fs: pgWs.fs, store: url, agent: 'llm:bench', profile: UNSPENT_PROFILE });
        const sqCtx = await createContext({ fs: sqWs.fs, store: join(dir, 'sqlite', 'state.db'), agent: 'llm:bench', profile: UNSPENT_PROFILE });
        return { dir, roots, schema: name, pg: { ctx: pgCtx, fs: pgWs.fs }, sqlite: { ctx: sqCtx, fs: sqWs.fs } };
      } catch (err) {
        await schemas.drop(name);
        removeWorkspace(dir, roots);
        throw err;
      }
    },
    async teardown(env) {
      try {
        for (const side of [env.pg, env.sqlite]) {
          await side.ctx.close();
          await side.fs.close();
        }
      } finally {
        await schemas.drop(env.schema);
        removeWorkspace(env.dir, env.roots);
      }
    },
    async cases(env): Promise<Case[]> {
      const ops = (ctx: ContextLayer) => ({
        read: () => ctx.readFile('read.txt'),
        replace: replaceToggle(ctx, 'replace.txt', 'replace line 07 '),
        patch: patchToggle(ctx, 'patch.txt', files['patch.txt']),
        audit: () => ctx.store.audit({ op: 'bench', path: 'read.txt', agent: 'llm:bench', sessionId: 'bench', params: { n: 1 }, result: 'ok', tokens: 300 }),
      });
      const p = ops(env.pg.ctx);
      const s = ops(env.sqlite.ctx);
      // Round trips per call, counted outside the timed runs (the calls also warm both sides up).
      const count = async (fn: () => Promise<unknown>) => {
        const c = await countStatements(fn, 10);
        return `PostgreSQL: ${round1(c.statements)} statements a call, ${round1(c.waited)} round trips waited for (counted until it returns), ${round1(c.transactions)} transactions`;
      };
      const trips = { read: await count(p.read), replace: await count(p.replace), patch: await count(p.patch), audit: await count(p.audit) };
      for (const fn of Object.values(s)) for (let i = 0; i < 10; i++) await fn();
      const pair = (name: string, subject: () => unknown, baseline: () => unknown, note: string, verify?: () => Promise<void>): Case => ({
        name,
        subjectName: 'PostgreSQL (socket)',
        subject,
        baselineName: 'SQLite file',
        baseline,
        target: { maxRatio: OPS_TARGET },
        note,
        ...(verify ? { verify } : {}),
      });
      const servedWhole = async () => {
        const [a, b] = [await p.read(), await s.read()];
        if (a.view !== 'full' || b.view !== 'full') throw new Error(`a read was not served whole: ${a.view} and ${b.view}`);
        if (a.text !== b.text) throw new Error('the two stores served different text');
      };
      return [
        pair('readFile 1 KB', p.read, s.read, `${trips.read}; the read's audit record is written later, up to 64 a transaction; ${server}`, servedWhole),
        pair('replace one line, 1 KB file', p.replace, s.replace, trips.replace),
        pair('applyPatch one-line hunk, 1 KB file', p.patch, s.patch, trips.patch),
        pair(
          'audit append (store.audit: one chained row)',
          p.audit,
          s.audit,
          `${trips.audit}; a change's record is written in the change's transaction instead`,
        ),
      ];
    },
  });
}

// ------------------------------------------------------------------ many processes

interface ProcessOutcome {
  readonly edits: number;
  readonly merged: number;
  readonly conflicts: number;
  readonly latencyMs: number[];
}

/** The shared files: one counter line per process, each three lines apart from the next, so edits by different processes never touch the same hunk. */
function sharedFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let f = 0; f < SHARED_FILES; f++) {
    const lines = [`# shared file ${f}`];
    for (let p = 0; p < 8; p++) lines.push(`p${p}=0`, ...Array.from({ length: 3 }, (_, i) => `# filler ${p}.${i} `.padEnd(63, '-')));
    files[`f${f}.txt`] = `${lines.join('\n')}\n`;
  }
  return files;
}

/** Waits for one message of each child matching `pick`, or rejects when one exits first or `ms` pass. */
function fromEach<T>(children: ChildProcess[], stderr: string[], ms: number, pick: (msg: unknown) => T | undefined): Promise<T[]> {
  return Promise.all(
    children.map(
      (child, i) =>
        new Promise<T>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`process ${i}: no answer within ${ms / 1000} s; stderr: ${stderr[i]}`)), ms);
          const onMessage = (msg: unknown) => {
            const v = pick(msg);
            if (v === undefined) return;
            clearTimeout(timer);
            child.off('message', onMessage);
            child.off('exit', onExit);
            resolve(v);
          };
          const onExit = (code: number | null) => {
            clearTimeout(timer);
            reject(new Error(`process ${i} exited (${code}) early: ${stderr[i]?.trim().split('\n').slice(-3).join(' | ')}`));
          };
          child.on('message', onMessage);
          child.once('exit', onExit);
        }),
    ),
  );
}

/** `n` processes editing one workspace over `store` for `ms`; the pooled outcome. */
async function editProcesses(store: string, root: string, stateDir: string, n: number, ms: number, during?: Sampler): Promise<ProcessOutcome[]> {
  const stderr: string[] = Array.from({ length: n }, () => '');
  const children = Array.from({ length: n }, (_, i) => {
    const child = fork(EDIT_WORKER, [store, root, stateDir, String(i), String(SHARED_FILES)], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    child.stderr?.on('data', (b: Buffer) => {
      stderr[i] += b.toString();
    });
    return child;
  });
  try {
    await fromEach(children, stderr, 60_000, (m) => ((m as { ready?: boolean }).ready === true ? true : undefined));
    const results = fromEach(children, stderr, ms + 60_000, (m) => (m as { result?: ProcessOutcome }).result);
    for (const child of children) child.send({ go: true, ms });
    during?.start();
    return await results;
  } finally {
    during?.stop();
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** Samples what the server's backends of one application are doing while the processes edit. */
interface Sampler {
  start(): void;
  stop(): void;
  /** `advisory lock wait 45%, …` over the samples taken, or undefined without any. */
  summary(): string | undefined;
}

/**
 * Every 25 ms, the state of each backend whose application_name is `app`
 * (pg_stat_activity): waiting for a lock (the store's per-workspace
 * transaction lock is an advisory lock), idle in a transaction (the
 * transaction's next statement is the client's turn: a round trip), running,
 * or idle. The per-file edit lock is taken by polling from the client, so its
 * waiters show as idle.
 */
function backendSampler(admin: pg.Client, app: string): Sampler {
  const counts = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  const sample = async () => {
    if (busy) return;
    busy = true;
    try {
      const { rows } = await admin.query<{ state: string | null; wait_event_type: string | null; wait_event: string | null }>(
        'SELECT state, wait_event_type, wait_event FROM pg_stat_activity WHERE application_name = $1',
        [app],
      );
      for (const r of rows) {
        const what =
          r.state === 'active'
            ? r.wait_event_type === 'Lock'
              ? `${r.wait_event} lock wait`
              : r.wait_event_type === null || r.wait_event_type === 'CPU'
                ? 'running'
                : `running (${r.wait_event_type}: ${r.wait_event})`
            : r.state === 'idle in transaction'
              ? 'idle in a transaction (waiting for the client)'
              : r.state === 'idle'
                ? 'idle (no statement: the client at work, a lock held by its connection, or a spare pooled one)'
                : (r.state ?? 'unknown');
        counts.set(what, (counts.get(what) ?? 0) + 1);
      }
    } catch {
      // A missed sample.
    } finally {
      busy = false;
    }
  };
  return {
    start() {
      timer = setInterval(() => void sample(), 25);
    },
    stop() {
      clearInterval(timer);
    },
    summary() {
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      if (total === 0) return undefined;
      return [...counts.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([what, n]) => `${what} ${((n / total) * 100).toFixed(0)}%`)
        .join(', ');
    },
  };
}

/** Latency of every edit of every process; `opsPerSec` is the edits/s of all processes together. */
function editStats(name: string, outcomes: readonly ProcessOutcome[], ms: number): SideStats {
  const edits = outcomes.reduce((n, o) => n + o.edits, 0);
  return {
    ...latency(
      name,
      outcomes.flatMap((o) => o.latencyMs),
    ),
    opsPerSec: edits / (ms / 1000),
  };
}

/** Statistics of one call's latency samples (ms). */
function latency(name: string, samples: readonly number[]): SideStats {
  const all = [...samples].sort((a, b) => a - b);
  const mean = all.reduce((a, b) => a + b, 0) / all.length;
  return {
    name,
    meanMs: mean,
    p50Ms: quantile(all, 0.5),
    p99Ms: quantile(all, 0.99),
    minMs: all[0] ?? Number.NaN,
    opsPerSec: 1000 / mean,
    samples: all.length,
    calls: all.length,
    batch: 1,
  };
}

async function processCases(base: string, admin: pg.Client, schemas: Schemas, ms: number, log: (line: string) => void): Promise<CaseResult[]> {
  const cases: CaseResult[] = [];
  const previous: { pg?: number } = {};
  for (const [k, n] of PROCESS_COUNTS.entries()) {
    const name = `${n} process${n === 1 ? '' : 'es'} × replace loop, ${SHARED_FILES} shared files`;
    log(`  state-store · ${name} …`);
    const started = performance.now();
    const figures: Partial<Record<'pg' | 'sqlite', { stats: SideStats; outcomes: ProcessOutcome[] }>> = {};
    let backends: string | undefined;
    try {
      for (const kind of k % 2 === 0 ? (['pg', 'sqlite'] as const) : (['sqlite', 'pg'] as const)) {
        const dir = mkdtempSync(join(base, `procs-${kind}-${n}-`));
        const schema = kind === 'pg' ? schemas.next() : undefined;
        let root: string | undefined;
        try {
          const ws = await workspace(dir, sharedFiles());
          root = ws.root;
          await ws.fs.close();
          // The processes' connections carry a name of their own, so the sampler sees only them.
          const app = `${SCHEMA_PREFIX}${process.pid}`;
          const store = schema === undefined ? join(dir, 'state.db') : `${schema.url}&application_name=${app}`;
          // The store is made (schema, migrations) before the processes start.
          const made: StateStore = await openStateStore(store);
          await made.close();
          const sampler = schema === undefined ? undefined : backendSampler(admin, app);
          const outcomes = await editProcesses(store, ws.root, ws.stateDir, n, ms, sampler);
          backends ??= sampler?.summary();
          figures[kind] = { stats: editStats(kind === 'pg' ? 'PostgreSQL (socket)' : 'SQLite file', outcomes, ms), outcomes };
        } finally {
          if (schema !== undefined) await schemas.drop(schema.name);
          removeWorkspace(dir, root === undefined ? [] : [root]);
        }
      }
    } catch (err) {
      cases.push({ kind: 'pair', name, status: 'error', comparisons: [], error: err instanceof Error ? err.message : String(err) });
      continue;
    } finally {
      log(`  state-store · ${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    const pgFig = figures.pg as { stats: SideStats; outcomes: ProcessOutcome[] };
    const sqFig = figures.sqlite as { stats: SideStats; outcomes: ProcessOutcome[] };
    const misses: string[] = [];
    const verdicts: string[] = [];
    if (n === 8) {
      const ok = pgFig.stats.p99Ms < P99_GOAL_MS;
      verdicts.push(`p99 < ${P99_GOAL_MS} ms: ${ok ? 'pass' : 'MISS'}`);
      if (!ok) misses.push(`PostgreSQL p99 ${pgFig.stats.p99Ms.toFixed(1)} ms ≥ ${P99_GOAL_MS} ms at ${n} processes`);
    }
    if (previous.pg !== undefined) {
      const change = pgFig.stats.opsPerSec / previous.pg - 1;
      const fell = change < -THROUGHPUT_NOISE;
      verdicts.push(
        `edits/s ${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)}% on ${PROCESS_COUNTS[k - 1]} processes: ${fell ? 'fell (MISS)' : 'not falling (pass)'}`,
      );
      if (fell)
        misses.push(`PostgreSQL edits/s fell from ${previous.pg.toFixed(0)} at ${PROCESS_COUNTS[k - 1]} processes to ${pgFig.stats.opsPerSec.toFixed(0)}`);
    }
    previous.pg = pgFig.stats.opsPerSec;
    const tally = (f: { stats: SideStats; outcomes: ProcessOutcome[] }) => {
      const merged = f.outcomes.reduce((a, o) => a + o.merged, 0);
      const conflicts = f.outcomes.reduce((a, o) => a + o.conflicts, 0);
      const per = f.outcomes.map((o) => o.edits).join('/');
      return `${f.stats.name} ${f.stats.opsPerSec.toFixed(0)} edits/s (per process ${per} in ${ms / 1000} s), p50 ${f.stats.p50Ms.toFixed(1)} ms, p99 ${f.stats.p99Ms.toFixed(1)} ms, ${merged} merged, ${conflicts} conflicts`;
    };
    const comparison: Comparison = {
      baseline: sqFig.stats,
      ratioP50: pgFig.stats.p50Ms / sqFig.stats.p50Ms,
      ratioMean: pgFig.stats.meanMs / sqFig.stats.meanMs,
      status: 'info',
    };
    const goals = n === 8 || previous.pg !== undefined;
    cases.push({
      kind: 'pair',
      name,
      status: misses.length > 0 ? 'miss' : goals ? 'pass' : 'info',
      subject: pgFig.stats,
      comparisons: [comparison],
      misses,
      note: `${tally(pgFig)}; ${tally(sqFig)}${verdicts.length > 0 ? `; PostgreSQL ${verdicts.join(', ')}` : ''}${backends === undefined ? '' : `; the processes' PostgreSQL backends, sampled every 25 ms: ${backends}`} (ops/s column: edits/s of all processes)`,
    });
  }
  return cases;
}

// ------------------------------------------------------------------ first scan

interface ScanEnv {
  readonly dir: string;
  readonly fs: HostFilesystem;
  readonly files: number;
  /** The next scan's empty store, per side, opened (and its schema made) outside the timed call. */
  readonly next: { pg?: { store: StateStore; schema: string }; sqlite?: { store: StateStore; path: string } };
}

function scanSuite(base: string, schemas: Schemas, root: string, files: number): Suite {
  let n = 0;
  const openPg = async (): Promise<{ store: StateStore; schema: string }> => {
    const { name, url } = schemas.next();
    return { store: await openStateStore(url), schema: name };
  };
  const openSqlite = async (dir: string): Promise<{ store: StateStore; path: string }> => {
    const path = join(dir, `scan-${++n}.db`);
    return { store: await openStateStore(path), path };
  };
  const dropSqlite = (path: string) => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  };
  return defineSuite<ScanEnv>({
    name: 'state-store',
    async setup() {
      const dir = mkdtempSync(join(base, 'scan-'));
      const fs = await HostFilesystem.open({ root, stateDir: join(dir, 'host-state'), readOnly: true });
      return { dir, fs, files, next: { pg: await openPg(), sqlite: await openSqlite(dir) } };
    },
    async teardown(env) {
      try {
        if (env.next.pg !== undefined) {
          await env.next.pg.store.close();
          await schemas.drop(env.next.pg.schema);
        }
        if (env.next.sqlite !== undefined) await env.next.sqlite.store.close();
        await env.fs.close();
      } finally {
        rmSync(env.dir, { recursive: true, force: true });
      }
    },
    cases: (env): Case[] => {
      let expected: number | undefined;
      const scan = (side: 'pg' | 'sqlite') => async () => {
        const next = env.next[side];
        if (next === undefined) throw new Error(`no fresh ${side} store`);
        const r = await new FileRegistry(env.fs, next.store, { ignore: ['.git'] }).scan();
        return { side, r };
      };
      return [
        {
          name: `registry first scan, ${files.toLocaleString('en')} files`,
          subjectName: 'into a new PostgreSQL schema',
          subject: scan('pg'),
          baselineName: 'into a new SQLite file',
          baseline: scan('sqlite'),
          target: { maxRatio: SCAN_TARGET },
          // Untimed: the used store is closed and dropped and the next one made.
          async cleanup(result) {
            const { side, r } = result as { side: 'pg' | 'sqlite'; r: { files: number } };
            if (side === 'pg') {
              const used = env.next.pg as { store: StateStore; schema: string };
              env.next.pg = undefined;
              await used.store.close();
              await schemas.drop(used.schema);
              env.next.pg = await openPg();
            } else {
              const used = env.next.sqlite as { store: StateStore; path: string };
              env.next.sqlite = undefined;
              await used.store.close();
              dropSqlite(used.path);
              env.next.sqlite = await openSqlite(env.dir);
            }
            // Both stores must register the same tree.
            expected ??= r.files;
            if (r.files !== expected) throw new Error(`${side}: the scan registered ${r.files} files, another scan ${expected}`);
          },
          note: `${root}; each call scans into an empty store made before it (schema and tables, or file), dropped after it`,
        },
      ];
    },
  });
}

function countFiles(root: string): number {
  let n = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) {
        if (e.name !== '.git') stack.push(join(dir, e.name));
      } else if (e.isFile()) n++;
    }
  }
  return n;
}

// ------------------------------------------------------------------ before the async port

interface SqliteRun {
  readonly readMs: number[];
  readonly replaceMs: number[];
  readonly scanMs: number;
}

/** One measuring process over the build whose packages are under `repo` (its `packages/*​/dist`). */
function sqliteRun(repo: string, dir: string, opMs: number, corpus: string | undefined): SqliteRun {
  const out = execFileSync(process.execPath, [SQLITE_WORKER, repo, dir, String(opMs), corpus ?? ''], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out) as SqliteRun;
}

async function beforeAsyncCases(base: string, quick: boolean, corpus: string | undefined, log: (line: string) => void): Promise<CaseResult[]> {
  const name = `SQLite today beside ${BEFORE_COMMIT} (before the async port)`;
  const before = process.env.CTXFS_BENCH_BEFORE_ASYNC;
  const notRun = (why: string): SingleResult => ({ kind: 'single', name, status: 'not-run', misses: [], note: why });
  if (before === undefined || before === '') {
    return [
      notRun(
        `set CTXFS_BENCH_BEFORE_ASYNC to a built checkout of ${BEFORE_COMMIT} (git worktree add /tmp/ctxfs-${BEFORE_COMMIT} ${BEFORE_COMMIT}; pnpm install --offline; pnpm exec tsc -b there)`,
      ),
    ];
  }
  if (!existsSync(join(before, 'packages', 'context', 'dist', 'index.js')))
    return [notRun(`${before}/packages/context/dist/index.js is missing: build that checkout (pnpm exec tsc -b)`)];
  const today = join(import.meta.dirname, '..', '..', '..');
  const rounds = quick ? 1 : 3;
  const opMs = quick ? 300 : 1500;
  const runs: Record<'today' | 'before', SqliteRun[]> = { today: [], before: [] };
  log(`  state-store · ${name} …`);
  const t0 = performance.now();
  try {
    for (let r = 0; r < rounds; r++) {
      for (const side of r % 2 === 0 ? (['today', 'before'] as const) : (['before', 'today'] as const)) {
        const dir = mkdtempSync(join(base, `before-${side}-`));
        try {
          runs[side].push(sqliteRun(side === 'today' ? today : before, dir, opMs, corpus));
        } finally {
          removeWorkspace(dir, [join(dir, 'ws')]);
        }
      }
    }
  } catch (err) {
    return [{ kind: 'single', name, status: 'error', misses: [], error: err instanceof Error ? err.message : String(err) }];
  } finally {
    log(`  state-store · ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  // Each side's samples of one figure, pooled over its processes.
  const sides = (pick: (r: SqliteRun) => number[]): [SideStats, SideStats] => [
    latency('today', runs.today.flatMap(pick)),
    latency(BEFORE_COMMIT, runs.before.flatMap(pick)),
  ];
  const pair = (what: string, [subject, baseline]: [SideStats, SideStats], note: string): CaseResult => {
    const ratioP50 = subject.p50Ms / baseline.p50Ms;
    const status = ratioP50 <= BEFORE_TARGET ? 'pass' : 'miss';
    return {
      kind: 'pair',
      name: `SQLite: ${what}, today vs before the async port`,
      status,
      subject,
      comparisons: [{ baseline, ratioP50, ratioMean: subject.meanMs / baseline.meanMs, target: { maxRatio: BEFORE_TARGET }, status }],
      note,
    };
  };
  const note = `${rounds} fresh process${rounds === 1 ? '' : 'es'} a side, alternating; each times every call for ${opMs} ms; goal: no slower (≤ ${BEFORE_TARGET.toFixed(2)}x, past noise)`;
  const cases = [
    pair(
      'readFile 1 KB',
      sides((r) => r.readMs),
      note,
    ),
    pair(
      'replace one line, 1 KB file',
      sides((r) => r.replaceMs),
      note,
    ),
  ];
  if (corpus !== undefined) {
    cases.push(
      pair(
        'registry first scan of the corpus',
        sides((r) => [r.scanMs]),
        `one scan into a new SQLite file per process, ${rounds} a side`,
      ),
    );
  }
  return cases;
}

// ------------------------------------------------------------------ the suite

/** An inner harness run's cases, or one error row when it did not run. */
function casesOf(r: SuiteResult, label: string): CaseResult[] {
  if (r.status === 'ran') return [...r.cases];
  if (r.status === 'not-run') return [{ kind: 'single', name: label, status: 'not-run', misses: [], note: r.reason ?? '' }];
  return [{ kind: 'single', name: label, status: 'error', misses: [], error: r.reason ?? r.status }];
}

function missesOf(cases: readonly CaseResult[]): string[] {
  const out: string[] = [];
  for (const c of cases) {
    if (c.status === 'error') out.push(`${c.name}: error: ${c.error}`);
    else if (c.kind === 'pair') {
      for (const x of c.comparisons)
        if (x.status === 'miss') out.push(`${c.name}: ${c.subject?.name} vs ${x.baseline.name} ${x.ratioP50.toFixed(2)}x > ${x.target?.maxRatio.toFixed(2)}x`);
      for (const m of c.misses ?? []) out.push(`${c.name}: ${m}`);
    } else for (const m of c.misses) out.push(`${c.name}: ${m}`);
  }
  return out;
}

const suite: Suite = {
  name: 'state-store',
  description: 'the PostgreSQL state store (Unix socket) beside SQLite (a file): context-layer operations, 1–8 processes editing, first scan of 34k files',
  async run(options: Partial<RunOptions> = {}) {
    const opts: RunOptions = { ...DEFAULT_RUN_OPTIONS, ...options };
    const quick = opts.timeMs < DEFAULT_RUN_OPTIONS.timeMs;
    const started = new Date();
    const t0 = performance.now();
    const cases: CaseResult[] = [];
    let status: SuiteResult['status'] = 'ran';
    let reason: string | undefined;
    const url = postgresUrl();
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-bench-state-store-'));
    let admin: pg.Client | undefined;
    let schemas: Schemas | undefined;
    const inner = { ...opts, resultsDir: undefined };
    try {
      admin = await connect(url);
      schemas = new Schemas(admin, url);
      const stale = await schemas.dropStale();
      if (stale > 0) opts.log(`  state-store: dropped ${stale} schema(s) left by killed runs`);

      cases.push(...casesOf(await opsSuite(base, schemas, await serverSettings(admin)).run(inner), 'context-layer operations'));
      cases.push(...(await processCases(base, admin, schemas, quick ? 1500 : 5000, opts.log)));

      let corpus: string | undefined;
      try {
        corpus = process.env.CTXFS_BENCH_CORPUS ?? nodeModulesCorpus();
      } catch (err) {
        cases.push({ kind: 'single', name: 'registry first scan', status: 'not-run', misses: [], note: (err as Error).message });
      }
      if (corpus !== undefined) {
        const files = countFiles(corpus);
        // A scan takes seconds: one sample a side per round, one warm-up.
        const scanOpts = { ...inner, rounds: quick ? 1 : 3, timeMs: 1, warmupMs: 1, minSamples: 1 };
        cases.push(...casesOf(await scanSuite(base, schemas, corpus, files).run(scanOpts), 'registry first scan'));
      }
      cases.push(...(await beforeAsyncCases(base, quick, corpus, opts.log)));
    } catch (err) {
      const skipped = err instanceof SuiteSkip;
      status = skipped ? 'not-run' : 'error';
      reason = err instanceof Error ? err.message : String(err);
    } finally {
      try {
        await schemas?.dropAll();
      } catch (err) {
        opts.log(`  state-store: dropping schemas failed: ${(err as Error).message}`);
      }
      await admin?.end().catch(() => undefined);
      rmSync(base, { recursive: true, force: true });
    }
    const result: SuiteResult = {
      suite: 'state-store',
      description: suite.description,
      status,
      ...(reason === undefined ? {} : { reason }),
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      durationMs: Math.round(performance.now() - t0),
      environment: environment(true),
      options: { timeMs: opts.timeMs, warmupMs: opts.warmupMs, rounds: opts.rounds, minSamples: opts.minSamples },
      cases,
      misses: missesOf(cases),
      files: [],
    };
    return { ...result, files: writeResults(result, opts.resultsDir) };
  },
};

export default suite;
