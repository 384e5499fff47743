/**
 * The tamper campaign: real audit logs (rotated files, a retention anchor,
 * elided parameters, non-ASCII paths) are damaged in memory more than 10,000
 * times in ten ways — a flipped byte, a record deleted, duplicated, moved,
 * the log or one file cut, a forged record with an unkeyed hash or a random
 * MAC, rotated files swapped, replaced by another chain's or merged, a field
 * edited and the line re-serialized — and every tampering must be detected,
 * with the first bad record named (file and line) and the damage classed.
 */
import { hash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { type AuditEntry, AuditTrail, type ChainAnchor, ChainKey, type DamageKind, type VerifyReport, verifyChain } from '../src/index.ts';
import { verifyInRuns, verifyParallel } from '../src/safety/audit/parallel-verify.ts';

const root = mkdtempSync(join(tmpdir(), 'ctxfs-audit-tamper-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const KEY = Buffer.alloc(32, 0x2a);
const key = new ChainKey(KEY);

/** mulberry32: a small seeded generator on 32-bit integer arithmetic (Math.imul), reproducible across runs. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) % n) | 0;
  };
}

interface Log {
  readonly name: string;
  readonly files: ReadonlyArray<{ readonly name: string; readonly bytes: Buffer }>;
  readonly anchor: ChainAnchor;
}

function entry(i: number, rnd: (n: number) => number): AuditEntry {
  const ops = [
    ['readFile', 'read'],
    ['replace', 'write'],
    ['applyPatch', 'write'],
    ['grep', 'search'],
    ['deleteFile', 'delete'],
    ['renameFile', 'rename'],
    ['rollback', 'history'],
    ['overview', 'read'],
  ] as const;
  const [op, opClass] = ops[i % ops.length] as (typeof ops)[number];
  const path = ['src/a.ts', 'docs/naïve-ünïcode.md', 'lib/日本語.py', 'README.md'][rnd(4)] as string;
  return {
    op,
    opClass,
    paths: [path],
    sessionId: `s${rnd(3)}`,
    agent: ['llm:claude', 'llm:ollama'][rnd(2)] as string,
    backend: 'host',
    user: 'dev',
    params: rnd(3) === 0 ? { old: 'x'.repeat(300 + rnd(50)), new: 'retries = 5' } : { maxTokens: 800 + rnd(100), strategy: 'middle' },
    result: (['ok', 'refused', 'denied', 'error'] as const)[rnd(4)] as 'ok',
    ...(opClass === 'write'
      ? { before: { [path]: hash('sha256', String(i), 'hex') }, after: { [path]: null }, diff: { files: 1, added: rnd(9), removed: rnd(9) } }
      : {}),
    ...(rnd(4) === 0 ? { approval: { required: true, by: 'user' as const, at: '2026-11-25T20:00:00.000Z', approver: 'dev' } } : {}),
    tokens: rnd(2000),
    durationMs: rnd(50),
  };
}

function buildLog(name: string, seed: number, records: number, retainFiles?: number): Log {
  const dir = join(root, name);
  const rnd = prng(seed);
  const trail = AuditTrail.open({ dir, key: KEY, maxFileBytes: 4096, ...(retainFiles === undefined ? {} : { retainFiles }) });
  for (let i = 0; i < records; i++) trail.append(entry(i, rnd));
  const tip = trail.tip;
  trail.close();
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => ({ name: f, bytes: readFileSync(join(dir, f)) }));
  return { name, files, anchor: tip };
}

/** Line boundaries of a file: [start, end) of each line (end at the newline). */
function lines(b: Buffer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let p = 0; p < b.length; ) {
    const nl = b.indexOf(10, p);
    const end = nl === -1 ? b.length : nl;
    out.push([p, end]);
    p = end + 1;
  }
  return out;
}

/** Newlines in `b[0, end)`. */
function newlines(b: Buffer, end: number): number {
  let n = 0;
  for (let p = b.indexOf(10); p !== -1 && p < end; p = b.indexOf(10, p + 1)) n++;
  return n;
}

function lineBufs(b: Buffer): Buffer[] {
  return lines(b).map(([s, e]) => b.subarray(s, e + 1));
}

function verifyFiles(files: ReadonlyArray<{ name: string; bytes: Buffer }>, anchor: ChainAnchor): VerifyReport {
  return verifyChain(
    files.map((f) => ({ name: f.name, bytes: () => f.bytes })),
    key,
    anchor,
  );
}

interface Tampered {
  readonly kind: string;
  readonly files: Array<{ name: string; bytes: Buffer }>;
  /** Where the first bad record must be named. */
  readonly at: { file: string; line: number };
  /** The damage kinds that describe it. */
  readonly damage: readonly DamageKind[];
}

const KINDS = ['flip', 'delete', 'duplicate', 'reorder', 'truncate', 'insert-unkeyed', 'insert-forged', 'splice', 'edit-field', 'truncate-file'] as const;

function tamper(kind: (typeof KINDS)[number], log: Log, twin: Log, rnd: (n: number) => number): Tampered | undefined {
  const files = log.files.map((f) => ({ name: f.name, bytes: f.bytes }));
  const fi = rnd(files.length);
  const f = files[fi] as { name: string; bytes: Buffer };
  const ls = lineBufs(f.bytes);
  const n = ls.length;
  switch (kind) {
    case 'flip': {
      const b = Buffer.from(f.bytes);
      const at = rnd(b.length);
      b[at] = (b[at] as number) ^ (1 + rnd(255));
      f.bytes = b;
      const line = newlines(b, at) + 1;
      // A newline flipped at the end of a file leaves a line without one: a torn tail.
      return { kind, files, at: { file: f.name, line }, damage: at === b.length - 1 ? ['truncated'] : ['edited'] };
    }
    case 'delete': {
      const L = rnd(n); // 0-based
      f.bytes = Buffer.concat(ls.filter((_, k) => k !== L));
      const last = L === n - 1;
      return { kind, files, at: { file: f.name, line: L + 1 }, damage: last ? ['truncated'] : ['removed'] };
    }
    case 'duplicate': {
      const L = rnd(n);
      const K = L + rnd(n - L); // insert the copy after line K (0-based)
      const out = [...ls];
      out.splice(K + 1, 0, ls[L] as Buffer);
      f.bytes = Buffer.concat(out);
      return { kind, files, at: { file: f.name, line: K + 2 }, damage: ['duplicated'] };
    }
    case 'reorder': {
      if (n < 2) return undefined;
      const a = rnd(n - 1);
      const b = a + 1 + rnd(n - a - 1);
      const out = [...ls];
      out[a] = ls[b] as Buffer;
      out[b] = ls[a] as Buffer;
      f.bytes = Buffer.concat(out);
      return { kind, files, at: { file: f.name, line: a + 1 }, damage: ['reordered'] };
    }
    case 'truncate':
    case 'truncate-file': {
      // The whole log cut at a byte ('truncate'), or one rotated file cut in place ('truncate-file').
      const c = rnd(f.bytes.length);
      const line = newlines(f.bytes, c) + 1;
      f.bytes = f.bytes.subarray(0, c);
      const kept = kind === 'truncate' ? files.slice(0, fi + 1) : files;
      return { kind, files: kept, at: { file: f.name, line }, damage: ['truncated'] };
    }
    case 'insert-unkeyed':
    case 'insert-forged': {
      const K = rnd(n); // insert after line K (0-based)
      const before = JSON.parse((ls[K] as Buffer).toString('utf8')) as Record<string, unknown>;
      const model = JSON.parse((ls[Math.min(K + 1, n - 1)] as Buffer).toString('utf8')) as Record<string, unknown>;
      const forged: Record<string, unknown> = {
        ...model,
        seq: Number(before.seq) + 1,
        prev: before.mac,
        type: 'entry',
        agent: 'llm:forger',
        paths: ['src/secret.ts'],
      };
      delete forged.mac;
      const head = JSON.stringify(forged).slice(0, -1);
      const mac = kind === 'insert-unkeyed' ? hash('sha256', head, 'hex') : randomBytes(32).toString('hex');
      const out = [...ls];
      out.splice(K + 1, 0, Buffer.from(`${head},"mac":"${mac}"}\n`));
      f.bytes = Buffer.concat(out);
      const atEnd = K === n - 1 && fi === files.length - 1;
      return {
        kind,
        files,
        at: { file: f.name, line: K + 2 },
        damage: kind === 'insert-unkeyed' ? ['unkeyed'] : atEnd ? ['edited', 'inserted'] : ['inserted'],
      };
    }
    case 'splice': {
      const way = rnd(3);
      if (way === 0) {
        // Two rotated files' contents swapped, names kept.
        if (files.length < 2) return undefined;
        const a = rnd(files.length - 1);
        const b = a + 1 + rnd(files.length - a - 1);
        const fa = files[a] as { name: string; bytes: Buffer };
        const fb = files[b] as { name: string; bytes: Buffer };
        [fa.bytes, fb.bytes] = [fb.bytes, fa.bytes];
        return { kind: 'splice-swap', files, at: { file: fa.name, line: 1 }, damage: ['spliced'] };
      }
      if (way === 1) {
        // A file replaced by the same-named file of another chain under the same key.
        const other = twin.files.find((t) => t.name === f.name);
        if (other === undefined) return undefined;
        f.bytes = other.bytes;
        return { kind: 'splice-foreign', files, at: { file: f.name, line: 1 }, damage: ['spliced'] };
      }
      // The next file merged into this one.
      if (fi + 1 >= files.length) return undefined;
      f.bytes = Buffer.concat([f.bytes, (files[fi + 1] as { bytes: Buffer }).bytes]);
      files.splice(fi + 1, 1);
      return { kind: 'splice-merge', files, at: { file: f.name, line: n + 1 }, damage: ['spliced'] };
    }
    case 'edit-field': {
      const L = rnd(n);
      const rec = JSON.parse((ls[L] as Buffer).toString('utf8')) as Record<string, unknown>;
      const fields = Object.keys(rec).filter((k) => k !== 'mac');
      const field = fields[rnd(fields.length)] as string;
      const v = rec[field];
      rec[field] =
        typeof v === 'number'
          ? v + 1 + rnd(5)
          : typeof v === 'string'
            ? `${v}x`
            : Array.isArray(v)
              ? [...v, 'src/extra.ts']
              : v === null
                ? 'x'
                : { ...(v as object), edited: true };
      const out = [...ls];
      out[L] = Buffer.from(`${JSON.stringify(rec)}\n`);
      f.bytes = Buffer.concat(out);
      return { kind, files, at: { file: f.name, line: L + 1 }, damage: ['edited'] };
    }
  }
}

describe('audit tamper campaign', () => {
  const retained = buildLog('retained', 1, 160, 8);
  const retainedTwin = buildLog('retained-twin', 2, 160, 8);
  const whole = buildLog('whole', 3, 90);
  const wholeTwin = buildLog('whole-twin', 4, 90);

  test('the logs built for the campaign verify, rotate and keep a retention anchor', () => {
    for (const log of [retained, retainedTwin, whole, wholeTwin]) {
      const r = verifyFiles(log.files, log.anchor);
      expect(r.firstBad, log.name).toBeUndefined();
      expect(r.ok).toBe(true);
      expect(log.files.length).toBeGreaterThan(4);
    }
    expect(retained.files.length).toBe(8);
    expect(retained.files[0]?.name).not.toBe('audit-000001.jsonl');
    expect(retained.files[0]?.bytes.toString('utf8', 0, 200)).toContain('"type":"rotate"');
    expect(whole.files[0]?.bytes.toString('utf8', 0, 200)).toContain('"type":"start"');
  });

  test('10,000+ random tamperings: all detected, the first bad record named, the damage classed', () => {
    const rnd = prng(20261125);
    const tally = new Map<string, { n: number; detected: number; placed: number; classed: number }>();
    const misses: string[] = [];
    let runs = 0;
    while (runs < 10_500) {
      const useWhole = rnd(2) === 0;
      const [log, twin] = useWhole ? [whole, wholeTwin] : [retained, retainedTwin];
      const kind = KINDS[rnd(KINDS.length)] as (typeof KINDS)[number];
      const t = tamper(kind, log, twin, rnd);
      if (t === undefined) continue;
      runs++;
      const r = verifyFiles(t.files, log.anchor);
      const row = tally.get(t.kind) ?? { n: 0, detected: 0, placed: 0, classed: 0 };
      row.n++;
      if (!r.ok && r.firstBad !== undefined) {
        row.detected++;
        const placed = r.firstBad.file === t.at.file && r.firstBad.line === t.at.line;
        const classed = t.damage.includes(r.firstBad.damage);
        if (placed) row.placed++;
        if (classed) row.classed++;
        if ((!placed || !classed) && misses.length < 10) {
          misses.push(
            `${t.kind} on ${log.name}: expected ${t.at.file}:${t.at.line} ${t.damage.join('|')}, got ${r.firstBad.file}:${r.firstBad.line} ${r.firstBad.damage} (${r.firstBad.detail})`,
          );
        }
      } else if (misses.length < 10) misses.push(`${t.kind} on ${log.name}: NOT DETECTED`);
      tally.set(t.kind, row);
    }
    const table = [...tally].map(([k, v]) => `${k.padEnd(16)} ${String(v.n).padStart(5)} detected ${v.detected} placed ${v.placed} classed ${v.classed}`);
    console.log(`tamper campaign, ${runs} runs:\n${table.join('\n')}`);
    expect(misses).toEqual([]);
    const total = [...tally.values()].reduce((a, v) => a + v.detected, 0);
    expect(total).toBe(runs);
    expect(runs).toBeGreaterThanOrEqual(10_000);
  });

  test('verification split in runs never passes a tampered log: 1,000 tamperings stitched in process, 12 on worker threads', () => {
    const rnd = prng(77);
    // The tampered copies go to tmpfs when there is one: thousands of small files written and read back.
    const shm = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/ctxfs-audit-runs-') : undefined;
    onTestFinished(() => {
      if (shm !== undefined) rmSync(shm, { recursive: true, force: true });
    });
    const dir = join(shm ?? root, 'parallel');
    const inProcess = (groups: ReadonlyArray<readonly string[]>) =>
      groups.map((names) =>
        verifyChain(
          names.map((name) => ({ name, bytes: () => readFileSync(join(dir, name)) })),
          key,
          undefined,
          { partial: true },
        ),
      );
    const put = (files: ReadonlyArray<{ name: string; bytes: Buffer }>) => {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      for (const f of files) writeFileSync(join(dir, f.name), f.bytes);
      return files.map((f) => f.name);
    };
    let checked = 0;
    while (checked < 1012) {
      const useWhole = rnd(2) === 0;
      const [log, twin] = useWhole ? [whole, wholeTwin] : [retained, retainedTwin];
      const t = tamper(KINDS[rnd(KINDS.length)] as (typeof KINDS)[number], log, twin, rnd);
      if (t === undefined || t.files.length < 2) continue;
      const names = put(t.files);
      if (checked < 12) {
        expect(verifyParallel(dir, names, key, KEY, log.anchor, 3, 0), t.kind).toBeUndefined();
      } else {
        // Every way of cutting the files into 2–4 runs.
        const cuts = 1 + rnd(Math.min(3, names.length - 1));
        const bounds = [0, ...Array.from({ length: cuts }, () => 1 + rnd(names.length - 1)), names.length].sort((a, b) => a - b);
        const parts = bounds
          .slice(1)
          .map((b, k) => [bounds[k] as number, b] as const)
          .filter(([a, b]) => b > a);
        expect(verifyInRuns(dir, names, parts, key, log.anchor, inProcess), t.kind).toBeUndefined();
      }
      checked++;
    }
    // An intact log passes in runs and on threads, with the figures of one thread.
    const names = put(retained.files);
    const one = verifyFiles(retained.files, retained.anchor);
    expect(
      verifyInRuns(
        dir,
        names,
        [
          [0, 3],
          [3, 5],
          [5, 8],
        ],
        key,
        retained.anchor,
        inProcess,
      ),
    ).toEqual({ ...one, threads: 3 });
    expect(verifyParallel(dir, names, key, KEY, retained.anchor, 3, 0)).toEqual({ ...one, threads: 3 });
  }, 120_000);

  test('edge cases: the first file emptied, the first or last line removed, a middle file removed or emptied', () => {
    for (const log of [whole, retained]) {
      const copy = () => log.files.map((f) => ({ name: f.name, bytes: f.bytes }));
      const first = log.files[0]?.name as string;
      const last = log.files[log.files.length - 1] as { name: string; bytes: Buffer };
      const lastLines = lineBufs(last.bytes).length;
      const at = (files: Array<{ name: string; bytes: Buffer }>) => verifyFiles(files, log.anchor).firstBad;

      let files = copy();
      (files[0] as { bytes: Buffer }).bytes = Buffer.alloc(0);
      expect(at(files), log.name).toMatchObject({ file: first, line: 1, damage: 'truncated' });

      files = copy();
      (files[0] as { bytes: Buffer }).bytes = Buffer.concat(lineBufs((files[0] as { bytes: Buffer }).bytes).slice(1));
      expect(at(files)).toMatchObject({ file: first, line: 1, damage: 'removed' });

      files = copy();
      (files[files.length - 1] as { bytes: Buffer }).bytes = Buffer.concat(lineBufs(last.bytes).slice(0, -1));
      expect(at(files)).toMatchObject({ file: last.name, line: lastLines, damage: 'truncated' });

      files = copy();
      const gone = files.splice(2, 1)[0] as { name: string };
      expect(at(files)).toMatchObject({ file: files[2]?.name, line: 1, damage: 'removed' });
      expect(gone.name).not.toBe(files[2]?.name);

      files = copy();
      (files[2] as { bytes: Buffer }).bytes = Buffer.alloc(0);
      expect(at(files)).toMatchObject({ file: files[2]?.name, line: 1, damage: 'truncated' });

      // The whole log gone while the trail knows its newest record.
      expect(verifyFiles([], log.anchor).firstBad).toMatchObject({ damage: 'truncated' });
    }
  });

  test('a verifier without the key cannot pass any line: a different key fails at the first line', () => {
    const other = new ChainKey(Buffer.alloc(32, 7));
    const r = verifyChain(
      whole.files.map((f) => ({ name: f.name, bytes: () => f.bytes })),
      other,
    );
    expect(r.ok).toBe(false);
    expect(r.firstBad).toMatchObject({ file: 'audit-000001.jsonl', line: 1, damage: 'wrong-key' });
  });
});
