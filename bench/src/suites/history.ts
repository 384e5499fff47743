/**
 * History stored as deltas (issue 16 §3): 1,000 versions of a 5,000-line
 * file with one-line edits — their size in the store beside the schema-7
 * store (every version whole, deflated) and beside `git gc --aggressive` of
 * a real git repository holding the same 1,000 commits, built in the same
 * run; the time to rebuild any version (goal < 10 ms) and to record one
 * (goal: no slower than schema 7, whose recording is timed beside it); and
 * a replay of a real file's git history, every version checked byte-exact
 * (`CTXFS_BENCH_HISTORY_REPO` and `CTXFS_BENCH_HISTORY_FILE` choose the
 * repository and file; by default this repository's most edited file).
 *
 * @module
 */

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { MIGRATIONS, SqliteStateStore, sha256Hex, VersionStore } from '@ctxfs/context';
import { gitFileHistory, mostEditedFiles } from '../../../packages/context/test/support/history-cases.ts';
import { type Case, defineSuite, single } from '../harness.ts';

const LINES = 5000;
const VERSIONS = 1000;
const MiB = 1024 * 1024;
const enc = new TextEncoder();

/** The edits suite's file and edits: line `(v × 37) mod 5,000` of version `v` becomes a comment. */
function bigFileVersions(): Uint8Array[] {
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) lines.push(i % 50 === 0 ? `export function f${i}(x: number): number {` : `  const v${i} = x * ${i}; // line ${i + 1}`);
  const out = [enc.encode(`${lines.join('\n')}\n`)];
  for (let v = 1; v < VERSIONS; v++) {
    lines[(v * 37) % LINES] = `  // version ${v}`;
    out.push(enc.encode(`${lines.join('\n')}\n`));
  }
  return out;
}

/** Records a version as the edit journal does: the old content, then the new one, then the version row. */
async function recordDelta(versions: VersionStore, path: string, before: Uint8Array | undefined, after: Uint8Array): Promise<string> {
  return await versions.store.transaction(async () => {
    if (before !== undefined) await versions.putBlob(before);
    const sha = await versions.putBlob(after);
    await versions.append({ path, sha256: sha, size: after.byteLength, op: 'write', author: 'bench' });
    return sha;
  });
}

/** Schema 7's recording, as its code did it: each content whole, deflated (level 1) when that saves a tenth. */
async function recordWhole(store: SqliteStateStore, path: string, before: Uint8Array | undefined, after: Uint8Array): Promise<string> {
  return await store.transaction(async () => {
    const put = async (bytes: Uint8Array) => {
      const sha = sha256Hex(bytes);
      if ((await store.get('SELECT 1 AS x FROM blobs WHERE sha256 = ?', [sha])) !== undefined) return sha;
      const packed = bytes.byteLength >= 512 ? deflateRawSync(bytes, { level: 1 }) : undefined;
      const deflated = packed !== undefined && packed.byteLength < bytes.byteLength * 0.9;
      await store.run('INSERT OR IGNORE INTO blobs (sha256, size, codec, content, stored_ms) VALUES (?, ?, ?, ?, ?)', [
        sha,
        bytes.byteLength,
        deflated ? 'deflate' : 'raw',
        deflated ? packed : bytes,
        Date.now(),
      ]);
      return sha;
    };
    if (before !== undefined) await put(before);
    const sha = await put(after);
    const last = (await store.get('SELECT MAX(seq) AS seq FROM history WHERE path = ?', [path])) as { seq: number | null };
    await store.run('INSERT INTO history (path, seq, sha256, size, op, author, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      path,
      Number(last.seq ?? 0) + 1,
      sha,
      after.byteLength,
      'write',
      'bench',
      Date.now(),
    ]);
    return sha;
  });
}

/** Bytes of git's pack after `git gc --aggressive` of a repository with one commit per version of `file`: the whole pack and its blobs alone. */
function gitAnchor(dir: string, file: string, versions: readonly Uint8Array[]): { pack: number; blobs: number; ms: number } {
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  const chunks: Buffer[] = [];
  for (const [i, bytes] of versions.entries()) {
    const msg = `version ${i + 1}\n`;
    chunks.push(
      Buffer.from(
        `commit refs/heads/main\ncommitter Bench <bench@example.invalid> ${1_700_000_000 + i} +0000\ndata ${msg.length}\n${msg}M 100644 inline ${file}\ndata ${bytes.byteLength}\n`,
      ),
    );
    chunks.push(Buffer.from(bytes), Buffer.from('\n'));
  }
  execFileSync('git', ['-C', dir, 'fast-import', '--quiet'], { input: Buffer.concat(chunks), maxBuffer: 64 * MiB });
  const started = performance.now();
  execFileSync('git', ['-C', dir, 'gc', '--aggressive', '--prune=now', '--quiet']);
  const ms = performance.now() - started;
  const packDir = join(dir, '.git', 'objects', 'pack');
  let pack = 0;
  let blobs = 0;
  for (const f of readdirSync(packDir)) {
    if (f.endsWith('.pack')) pack += statSync(join(packDir, f)).size;
    if (!f.endsWith('.idx')) continue;
    const listing = execFileSync('git', ['-C', dir, 'verify-pack', '-v', join(packDir, f)], { maxBuffer: 64 * MiB }).toString();
    for (const line of listing.split('\n')) {
      const cols = line.split(/\s+/);
      if (cols[1] === 'blob') blobs += Number(cols[3]);
    }
  }
  return { pack, blobs, ms };
}

/** SQLite file size after a checkpoint and VACUUM: what the store takes on disk. */
function fileBytes(store: SqliteStateStore): number {
  store.database.db.exec('PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE)');
  return statSync(store.path).size;
}

interface Replay {
  readonly label: string;
  readonly versions: number;
  readonly rawBytes: number;
  readonly storedBytes: number;
  readonly wholeBytes: number;
  readonly git: { pack: number; blobs: number };
  readonly recordMs: number;
  readonly store: VersionStore;
  readonly shas: readonly string[];
}

/** Replays `history` through a fresh store, checks every version byte-exact, and measures it beside schema 7 and git. */
async function replay(dir: string, label: string, file: string, history: readonly Uint8Array[]): Promise<Replay> {
  const store = new VersionStore(await SqliteStateStore.open({ path: join(dir, `${label.replace(/\W+/g, '-')}.db`) }));
  const shas: string[] = [];
  const started = performance.now();
  for (const [i, bytes] of history.entries()) shas.push(await recordDelta(store, file, history[i - 1], bytes));
  const recordMs = (performance.now() - started) / history.length;
  store.blobs.clearCache();
  for (const [i, bytes] of history.entries()) {
    const back = await store.getBlob(shas[i] as string);
    if (back === undefined || !Buffer.from(back).equals(bytes)) throw new Error(`${label}: version ${i + 1} of ${file} did not round-trip`);
  }
  let wholeBytes = 0;
  const seen = new Set<string>();
  for (const bytes of history) {
    const sha = sha256Hex(bytes);
    if (seen.has(sha)) continue;
    seen.add(sha);
    const packed = bytes.byteLength >= 512 ? deflateRawSync(bytes, { level: 1 }) : bytes;
    wholeBytes += packed.byteLength < bytes.byteLength * 0.9 ? packed.byteLength : bytes.byteLength;
  }
  const git = gitAnchor(join(dir, `git-${label.replace(/\W+/g, '-')}`), file.split('/').pop() as string, history);
  return {
    label,
    versions: history.length,
    rawBytes: history.reduce((n, b) => n + b.byteLength, 0),
    storedBytes: await store.storedBytes(),
    wholeBytes,
    git,
    recordMs,
    store,
    shas,
  };
}

interface Env {
  readonly dir: string;
  readonly versions: readonly Uint8Array[];
  readonly delta: VersionStore;
  readonly whole: SqliteStateStore;
  readonly shas: readonly string[];
  readonly deepest: string;
  readonly deltaFile: number;
  readonly wholeFile: number;
  readonly git: { pack: number; blobs: number; ms: number };
  readonly real: Replay;
  /** Migration 9 (history as deltas) of a copy of the schema-7 store: time, and content bytes after. */
  readonly migration: { readonly ms: number; readonly bytes: number };
}

/** Opens a copy of the schema-7 store with every migration, which converts it to deltas, and checks every version of it. */
async function migrate(whole: SqliteStateStore, dir: string, shas: readonly string[], versions: readonly Uint8Array[]): Promise<{ ms: number; bytes: number }> {
  whole.database.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const path = join(dir, 'migrated.db');
  copyFileSync(whole.path, path);
  const started = performance.now();
  const store = await SqliteStateStore.open({ path });
  const ms = performance.now() - started;
  const migrated = new VersionStore(store);
  for (const [i, sha] of shas.entries()) {
    const back = await migrated.getBlob(sha);
    if (back === undefined || !Buffer.from(back).equals(versions[i] as Uint8Array)) throw new Error(`migrated version ${i + 1} did not round-trip`);
  }
  const bytes = await migrated.storedBytes();
  await store.close();
  return { ms, bytes };
}

const mib = (n: number) => `${(n / MiB).toFixed(2)} MiB`;
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;

export default defineSuite<Env>({
  name: 'history',
  description: '1,000 versions of a 5,000-line file: size beside schema 7 and git gc --aggressive, rebuild and record times; a real history replayed',
  options: { rounds: 2, minSamples: 10, timeMs: 400 },
  async setup() {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfs-bench-history-'));
    const versions = bigFileVersions();
    const delta = new VersionStore(await SqliteStateStore.open({ path: join(dir, 'delta.db') }));
    const whole = await SqliteStateStore.open({ path: join(dir, 'whole.db'), migrations: MIGRATIONS.filter((m) => m.version <= 7) });
    const shas: string[] = [];
    for (const [i, bytes] of versions.entries()) {
      shas.push(await recordDelta(delta, 'big.ts', versions[i - 1], bytes));
      await recordWhole(whole, 'big.ts', versions[i - 1], bytes);
    }
    const depths = new Map<string, number>();
    for (const s of shas) depths.set(s, (await delta.blobs.encoding(s))?.depth ?? 0);
    const deepest = shas.reduce((best, s) => ((depths.get(s) ?? 0) > (depths.get(best) ?? 0) ? s : best));
    const git = gitAnchor(join(dir, 'git'), 'big.ts', versions);
    const repo = process.env.CTXFS_BENCH_HISTORY_REPO ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
    const file = process.env.CTXFS_BENCH_HISTORY_FILE ?? (mostEditedFiles(repo, 1)[0] as string);
    const real = await replay(dir, `${repo.split('/').slice(-2).join('/')}:${file}`, file, gitFileHistory(repo, file));
    const migration = await migrate(whole, dir, shas, versions);
    return {
      dir,
      versions,
      delta,
      whole,
      shas,
      deepest,
      deltaFile: fileBytes(delta.store as SqliteStateStore),
      wholeFile: fileBytes(whole),
      git,
      real,
      migration,
    };
  },
  async teardown(env) {
    await env.delta.store.close();
    await env.whole.close();
    await env.real.store.store.close();
    rmSync(env.dir, { recursive: true, force: true });
  },
  cases: async (env) => {
    const base = env.versions[env.versions.length - 1] as Uint8Array;
    // A fresh one-line edit per call: the same bytes patched at one place, on both sides alike.
    const edits = (record: (before: Uint8Array | undefined, after: Uint8Array) => unknown) => {
      let n = 0;
      let last: Uint8Array | undefined;
      const at = base.indexOf(10, 100_000) + 3;
      return async () => {
        const next = base.slice();
        next.set(enc.encode(`${++n}`.padStart(8, '0')), at);
        await record(last, next);
        last = next;
      };
    };
    const wholeRead = env.whole.database.statement('SELECT codec, content FROM blobs WHERE sha256 = ?');
    const cases: Case[] = [
      {
        name: 'record a version (one-line edit of 5,000 lines)',
        subjectName: 'VersionStore (deltas)',
        subject: edits((b, a) => recordDelta(env.delta, 'rec.ts', b, a)),
        baseline: edits((b, a) => recordWhole(env.whole, 'rec.ts', b, a)),
        baselineName: 'schema 7 (whole, deflated)',
        batch: 1,
        target: { maxRatio: 1.0 },
        note: `1,000 versions stored: ${mib(await env.delta.storedBytes())} content, ${mib(env.deltaFile)} SQLite file (goal < 2 MiB); schema 7: ${mib((await env.whole.get<{ n: number }>('SELECT SUM(LENGTH(content)) AS n FROM blobs'))?.n as number)} content, ${mib(env.wholeFile)} file; git gc --aggressive of the same 1,000 commits: ${mib(env.git.pack)} pack, ${mib(env.git.blobs)} of it blobs (${(env.git.ms / 1000).toFixed(1)} s); migrations 8–9 of the schema-7 store: ${(env.migration.ms / 1000).toFixed(1)} s, to ${mib(env.migration.bytes)}, every version checked`,
      },
      single({
        kind: 'single',
        name: `rebuild the deepest version (depth ${(await env.delta.blobs.encoding(env.deepest))?.depth}), cache cleared`,
        run: async () => {
          env.delta.blobs.clearCache();
          const b = await env.delta.getBlob(env.deepest);
          if (b === undefined) throw new Error('missing');
          return b.byteLength;
        },
        budget: { maxMs: 10 },
      }),
      {
        name: 'rebuild any of the 1,000 versions, cache cleared',
        subjectName: 'VersionStore (deltas)',
        subject: (() => {
          let i = 0;
          return async () => {
            env.delta.blobs.clearCache();
            i = (i + 389) % env.shas.length;
            return (await env.delta.getBlob(env.shas[i] as string))?.byteLength;
          };
        })(),
        baseline: (() => {
          let i = 0;
          return () => {
            i = (i + 389) % env.shas.length;
            const row = wholeRead.get(env.shas[i] as string) as { codec: string; content: Uint8Array };
            return row.codec === 'deflate' ? inflateRawSync(row.content).byteLength : row.content.byteLength;
          };
        })(),
        baselineName: 'schema 7 (inflate)',
        budget: { maxMs: 10 },
        note: 'informative: a rebuild is one whole version and up to MAX_CHAIN (64) deltas, a schema-7 read one inflate',
      },
      single({
        kind: 'single',
        name: `replay: rebuild a version of ${env.real.label}`,
        run: (() => {
          let i = 0;
          return async () => {
            env.real.store.blobs.clearCache();
            i = (i + 7) % env.real.shas.length;
            return (await env.real.store.getBlob(env.real.shas[i] as string))?.byteLength;
          };
        })(),
        budget: { maxMs: 10 },
        note: `${env.real.versions} versions (${mib(env.real.rawBytes)} raw) replayed, every one byte-exact: stored ${kib(env.real.storedBytes)}; schema 7 ${kib(env.real.wholeBytes)}; git gc --aggressive ${kib(env.real.git.pack)} pack, ${kib(env.real.git.blobs)} blobs; recording ${env.real.recordMs.toFixed(2)} ms a version`,
      }),
    ];
    return cases;
  },
});
