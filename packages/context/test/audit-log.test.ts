/**
 * The audit trail on real files: the record shape, parameter elision,
 * rotation, retention and its anchor, query filters through the index (and
 * without one), reopening, the key file, several trails on one log, a torn tail, records lost
 * behind the index's back, and reset.
 */

import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { type AuditEntry, AuditTrail, ChainKey, defaultAuditDir, elideParams, SqliteStateStore } from '../src/index.ts';
import { runWorker } from './support/run-worker.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'ctxfs-audit-log-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
/** A fresh case directory: a workspace, a log directory beside it, a key in a separate state directory. */
function place(): { dir: string; keyFile: string; workspace: string } {
  const base = join(root, `case-${++n}`);
  const workspace = join(base, 'workspace');
  mkdirSync(workspace, { recursive: true });
  return { dir: join(base, '.workspace.ctxfs', 'audit'), keyFile: join(base, 'state-home', 'ctxfs', 'audit.key'), workspace };
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function entry(over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    op: 'readFile',
    opClass: 'read',
    paths: ['src/a.ts'],
    sessionId: 's1',
    agent: 'llm:claude',
    backend: 'host',
    user: 'dev',
    params: { maxTokens: 800 },
    result: 'ok',
    tokens: 342,
    durationMs: 3,
    ...over,
  };
}

function logLines(dir: string): Array<Record<string, unknown>> {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    );
}

describe('audit record', () => {
  test('one JSON line per entry, every field in a fixed order, chained to the line before', () => {
    const { dir, keyFile } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile } });
    const a = trail.append(entry());
    const b = trail.append(
      entry({
        op: 'replace',
        opClass: 'write',
        requestId: 'req-7',
        params: { old: 'retries = 3', new: 'retries = 5' },
        result: 'refused',
        code: 'ECONFLICT',
        approval: { required: true, by: 'user', at: '2026-11-25T20:00:00.000Z', approver: 'dev' },
        before: { 'src/a.ts': sha('a') },
        after: { 'src/a.ts': null },
        diff: { files: 1, added: 1, removed: 1 },
        durationMs: 12,
      }),
    );
    trail.close();
    const lines = logLines(dir);
    expect(lines.map((l) => l.type)).toEqual(['start', 'entry', 'entry']);
    expect(lines[0]).toMatchObject({ seq: 1, prev: '0'.repeat(64), file: 'audit-000001.jsonl', format: 1 });
    expect(Object.keys(lines[2] as object)).toEqual([
      'seq',
      'prev',
      'ts',
      'type',
      'requestId',
      'sessionId',
      'agent',
      'backend',
      'user',
      'op',
      'opClass',
      'paths',
      'params',
      'result',
      'code',
      'tokens',
      'approval',
      'before',
      'after',
      'diff',
      'durationMs',
      'mac',
    ]);
    expect(a).toMatchObject({ seq: 2, prev: lines[0]?.mac, type: 'entry', op: 'readFile', location: { file: 'audit-000001.jsonl', line: 2 }, verified: true });
    expect(a.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(b).toMatchObject({ seq: 3, prev: a.mac, requestId: 'req-7', code: 'ECONFLICT', diff: { files: 1, added: 1, removed: 1 } });
    const { location: _l, verified: _v, ...written } = b;
    expect(lines[2]).toEqual(written);
  });

  test('long strings and bytes in params become their size and SHA-256; nothing long reaches the file', () => {
    const long = 'const secretPlan = 1;\n'.repeat(40);
    const emoji = '😀'.repeat(300);
    expect(elideParams({ a: 'x'.repeat(256), b: 'x'.repeat(257) })).toEqual({
      a: 'x'.repeat(256),
      b: { elided: true, chars: 257, sha256: sha('x'.repeat(257)) },
    });
    // Code points, not UTF-16 units: 200 emoji are 400 units but 200 characters.
    expect(elideParams({ e: '😀'.repeat(200) }).e).toBe('😀'.repeat(200));
    expect(elideParams({ e: emoji }).e).toEqual({ elided: true, chars: 300, sha256: sha(emoji) });
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    expect(
      elideParams({ nested: { deep: [long, 1, undefined, null] }, bytes: new Uint8Array([1, 2, 3]), skip: undefined, fn: () => 1, big: 10n, cyclic }),
    ).toEqual({
      nested: { deep: [{ elided: true, chars: long.length, sha256: sha(long) }, 1, null, null] },
      bytes: {
        elided: true,
        bytes: 3,
        sha256: createHash('sha256')
          .update(new Uint8Array([1, 2, 3]))
          .digest('hex'),
      },
      big: '10',
      cyclic: { n: 1, self: '[cycle]' },
    });
    const { dir, keyFile } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile } });
    const r = trail.append(entry({ op: 'writeFile', opClass: 'write', params: { content: long } }));
    trail.close();
    expect(r.params).toEqual({ content: { elided: true, chars: long.length, sha256: sha(long) } });
    expect(readFileSync(join(dir, 'audit-000001.jsonl'), 'utf8')).not.toContain('secretPlan');
  });

  test('malformed entries are refused with EINVAL before anything is written', () => {
    const { dir, keyFile } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile } });
    expect(() => trail.append(entry({ opClass: 'bogus' as 'read' }))).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => trail.append(entry({ durationMs: -1 }))).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => trail.append(entry({ paths: [1 as unknown as string] }))).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    trail.close();
    expect(logLines(dir)).toHaveLength(1);
  });
});

describe('rotation and retention', () => {
  test('files rotate by size; each begins with a header naming the file before and chaining to its last MAC', () => {
    const { dir, keyFile } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile }, maxFileBytes: 2048 });
    for (let i = 0; i < 60; i++) trail.append(entry({ paths: [`src/f${i}.ts`] }));
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort();
    expect(files.length).toBeGreaterThan(5);
    expect(files.slice(0, 3)).toEqual(['audit-000001.jsonl', 'audit-000002.jsonl', 'audit-000003.jsonl']);
    for (let k = 0; k < files.length; k++) {
      const text = readFileSync(join(dir, files[k] as string), 'utf8');
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2048);
      const first = JSON.parse(text.slice(0, text.indexOf('\n'))) as Record<string, unknown>;
      if (k === 0) continue;
      const before = readFileSync(join(dir, files[k - 1] as string), 'utf8')
        .trimEnd()
        .split('\n');
      const last = JSON.parse(before[before.length - 1] as string) as Record<string, unknown>;
      expect(first).toMatchObject({ type: 'rotate', file: files[k], prevFile: files[k - 1], prev: last.mac, seq: Number(last.seq) + 1 });
    }
    expect(trail.verify()).toMatchObject({ ok: true, files: files.length, entries: 60 });
    trail.close();
  });

  test('retention keeps the newest files; the first kept file is anchored by its header; removing more is detected', async () => {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    const trail = AuditTrail.open({ dir, key: { keyFile }, maxFileBytes: 2048, retainFiles: 3, index: store });
    for (let i = 0; i < 80; i++) trail.append(entry({ paths: ['src/a.ts'] }));
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort();
    expect(files).toHaveLength(3);
    expect(files[0]).not.toBe('audit-000001.jsonl');
    const head = JSON.parse(readFileSync(join(dir, files[2] as string), 'utf8').split('\n')[0] as string) as Record<string, unknown>;
    expect(head).toMatchObject({ type: 'rotate', oldest: files[0] });
    const report = trail.verify();
    expect(report).toMatchObject({ ok: true, files: 3 });
    // The index forgot what retention deleted: every hit is still in the log.
    const firstKept = Number((JSON.parse(readFileSync(join(dir, files[0] as string), 'utf8').split('\n')[0] as string) as { seq: number }).seq);
    const hits = trail.query({ path: 'src/a.ts', limit: 1000 });
    expect(hits.length).toBe(report.entries);
    expect(Math.min(...hits.map((h) => h.seq))).toBeGreaterThan(firstKept);
    // Deleting the oldest kept file by hand is not retention.
    unlinkSync(join(dir, files[0] as string));
    expect(trail.verify().firstBad).toMatchObject({ file: files[1], line: 1, damage: 'removed' });
    trail.close();
    await store.close();
  });
});

describe('verify on several threads', () => {
  test('a log split over worker threads verifies as on one thread; damage falls back to the exact one-thread report', () => {
    const { dir, keyFile } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile }, maxFileBytes: 2048, retainFiles: 12 });
    for (let i = 0; i < 120; i++) trail.append(entry({ paths: [`src/f${i}.ts`] }));
    const one = trail.verify({ workers: 1 });
    expect(one.ok).toBe(true);
    expect(trail.verify({ workers: 3, parallelMinBytes: 0 })).toEqual({ ...one, threads: 3 });
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort();
    const victim = join(dir, files[7] as string);
    const lines = readFileSync(victim, 'utf8').split('\n');
    [lines[2], lines[3]] = [lines[3] as string, lines[2] as string];
    writeFileSync(victim, lines.join('\n'));
    const bad = trail.verify({ workers: 3, parallelMinBytes: 0 });
    expect(bad.firstBad).toMatchObject({ file: files[7], line: 3, damage: 'reordered' });
    expect(bad).toEqual(trail.verify({ workers: 1 }));
    trail.close();
  });
});

describe('newest', () => {
  test("newest(n) is the log's newest n entries, read back from its end: across rotated files, past its first window, around a changed line", () => {
    const { dir, keyFile } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile }, maxFileBytes: 64 * 1024 });
    try {
      // Entries of very different sizes: some larger than the first window read from the end.
      for (let i = 0; i < 300; i++) trail.append(entry({ params: { i, pad: 'x'.repeat(i % 37 === 0 ? 20_000 : (i * 53) % 900) } }));
      expect(trail.verify().files).toBeGreaterThan(2);
      const all = trail.scan({ limit: 1_000 });
      const key = (r: { seq: number; verified: boolean }) => `${r.seq}:${r.verified}`;
      for (const n of [1, 2, 17, 64, 150, 299, 300, 500]) expect(trail.newest(n).map(key), `newest(${n})`).toEqual(all.slice(0, n).map(key));
      // A line changed in the middle: it is returned unverified, named by its line.
      const file = join(dir, 'audit-000001.jsonl');
      const lines = readFileSync(file, 'utf8').split('\n');
      lines[5] = (lines[5] as string).replace('"op":"readFile"', '"op":"readFilX"');
      writeFileSync(file, lines.join('\n'));
      const bad = trail.newest(1_000).find((r) => !r.verified);
      expect(bad?.location).toEqual({ file: 'audit-000001.jsonl', line: 6 });
    } finally {
      trail.close();
    }
  });
});

describe('query', async () => {
  const { dir, keyFile } = place();
  const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
  const trail = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 4096 });
  const t0 = Date.now();
  const written = [
    trail.append(entry({ paths: ['src/a.ts'], agent: 'llm:claude', sessionId: 's1' })),
    trail.append(entry({ op: 'replace', opClass: 'write', paths: ['src/a.ts', 'src/b.ts'], agent: 'llm:ollama', sessionId: 's2', backend: 'container' })),
    trail.append(entry({ op: 'grep', opClass: 'search', paths: ['src'], agent: 'llm:claude', sessionId: 's2', result: 'denied' })),
    trail.append(entry({ paths: ['src/b.ts'], agent: 'llm:ollama', sessionId: 's1' })),
  ];
  afterAll(async () => {
    trail.close();
    await store.close();
  });
  const seqs = (rs: Array<{ seq: number }>) => rs.map((r) => r.seq);
  const [w0, w1, w2, w3] = written.map((w) => w.seq) as [number, number, number, number];

  test('filters by file, agent, session, operation, class, backend, result and time; newest first; limit', () => {
    expect(seqs(trail.query({ path: 'src/a.ts' }))).toEqual([w1, w0]);
    expect(seqs(trail.query({ path: 'src/b.ts' }))).toEqual([w3, w1]);
    expect(seqs(trail.query({ agent: 'llm:claude' }))).toEqual([w2, w0]);
    expect(seqs(trail.query({ sessionId: 's2' }))).toEqual([w2, w1]);
    expect(seqs(trail.query({ op: 'replace' }))).toEqual([w1]);
    expect(seqs(trail.query({ opClass: 'search' }))).toEqual([w2]);
    expect(seqs(trail.query({ backend: 'container' }))).toEqual([w1]);
    expect(seqs(trail.query({ result: 'denied' }))).toEqual([w2]);
    expect(seqs(trail.query({ path: 'src/b.ts', agent: 'llm:ollama', sessionId: 's1' }))).toEqual([w3]);
    expect(seqs(trail.query({ since: new Date(t0 - 1000) }))).toEqual([w3, w2, w1, w0]);
    expect(seqs(trail.query({ until: new Date(t0 - 1000) }))).toEqual([]);
    expect(seqs(trail.query({ since: new Date(Date.now() + 60_000) }))).toEqual([]);
    expect(seqs(trail.query({ limit: 2 }))).toEqual([w3, w2]);
  });

  test('results are the records as written, read back from the log and checked against their MAC', () => {
    const [r] = trail.query({ op: 'replace' });
    expect(r).toEqual(written[1]);
    expect(r?.verified).toBe(true);
  });

  test('without an index, query scans the log and agrees', () => {
    const filters = [{ path: 'src/a.ts' }, { agent: 'llm:claude' }, { sessionId: 's2', limit: 1 }, { result: 'denied' as const }];
    const indexed = filters.map((f) => seqs(trail.query(f)));
    trail.close();
    const plain = AuditTrail.open({ dir, key: { keyFile } });
    expect(filters.map((f) => seqs(plain.query(f)))).toEqual(indexed);
    expect(plain.query({ op: 'replace' })).toEqual([written[1]]);
    plain.close();
  });
});

describe('reopening', () => {
  test('a reopened trail continues the chain; the index catches up on what it missed and can be rebuilt', async () => {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    let trail = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 4096 });
    for (let i = 0; i < 20; i++) trail.append(entry());
    const tip = trail.tip;
    trail.close();
    // Rows the index never got (a crash before the batch was written).
    store.database.db.exec('DELETE FROM audit_index WHERE seq > 10; DELETE FROM audit_index_paths WHERE seq > 10');
    trail = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 4096 });
    expect(trail.tip).toEqual(tip);
    const next = trail.append(entry());
    expect(next).toMatchObject({ seq: tip.seq + 1, prev: tip.mac });
    expect(trail.query({ limit: 1000 })).toHaveLength(21);
    expect(trail.rebuildIndex()).toBe(21);
    expect(trail.query({ limit: 1000 })).toHaveLength(21);
    expect(trail.verify()).toMatchObject({ ok: true, entries: 21 });
    trail.close();
    await store.close();
  });

  test.each([
    ['in files of 4 KB', 4096],
    ['in one file', undefined],
  ])(
    'an open reads only what was appended since the last open that indexed the whole log, and still catches a lost queue there (%s)',
    async (_, maxFileBytes) => {
      const { dir, keyFile } = place();
      const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
      const open = () => AuditTrail.open({ dir, key: { keyFile }, index: store, ...(maxFileBytes === undefined ? {} : { maxFileBytes }) });
      let trail = open();
      for (let i = 0; i < 40; i++) trail.append(entry());
      trail.close();
      // This open indexes the whole log (nothing was known complete yet) and marks it so.
      trail = open();
      const mark = trail.tip.seq;
      for (let i = 0; i < 5; i++) trail.append(entry());
      trail.close();
      // A process that died with its last rows queued: the index lacks entries past the mark, and the next open adds them.
      store.database.db.exec(`DELETE FROM audit_index WHERE seq > ${mark}; DELETE FROM audit_index_paths WHERE seq > ${mark}`);
      trail = open();
      expect(trail.query({ limit: 1000 })).toHaveLength(45);
      trail.close();
      // Rows below the mark are never read again from the log (neither the files before it nor the lines before it
      // in its own file): a row removed there by hand stays removed until the index is rebuilt.
      const first = (store.database.db.prepare('SELECT seq FROM audit_index ORDER BY seq LIMIT 1 OFFSET 9').get() as { seq: number }).seq;
      store.database.db.exec(`DELETE FROM audit_index WHERE seq <= ${first}; DELETE FROM audit_index_paths WHERE seq <= ${first}`);
      trail = open();
      expect(trail.query({ limit: 1000 })).toHaveLength(35);
      expect(trail.rebuildIndex()).toBe(45);
      expect(trail.query({ limit: 1000 })).toHaveLength(45);
      expect(trail.verify()).toMatchObject({ ok: true, entries: 45 });
      trail.close();
      await store.close();
    },
  );

  test('a log directory deleted under an open trail: it refuses to append, with the reason, and never forks the new chain', async () => {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    const old = AuditTrail.open({ dir, key: { keyFile }, index: store });
    old.append(entry());
    // Its row in the index (rows are written a tick after their lines): what the next open knows of the old chain.
    expect(old.query()).toHaveLength(1);
    const oldChain = old.tip.chain;
    rmSync(dir, { recursive: true, force: true });
    const refused = expect.objectContaining({ code: 'EIO', message: expect.stringContaining('was deleted or replaced while this trail had it open') });
    // Before another process opened the directory again (SQLite said only "disk I/O error"), and after (it locked the
    // unlinked lock file, so its appends interleaved with the new process's).
    expect(() => old.append(entry())).toThrow(refused);
    const fresh = AuditTrail.open({ dir, key: { keyFile }, index: store });
    expect(() => old.append(entry())).toThrow(refused);
    expect(() => old.verify()).toThrow(refused);
    fresh.append(entry());
    expect(fresh.verify()).toMatchObject({ ok: false, firstBad: { damage: 'removed' } });
    expect(logLines(dir)[0]).toMatchObject({ type: 'start', previousChain: { chain: oldChain } });
    expect(logLines(dir).filter((l) => l.type === 'entry')).toHaveLength(1);
    old.close();
    fresh.close();
    await store.close();
  });

  test('two trails on one log take turns: each continues the chain after the other’s lines', async () => {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    const a = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 2048 });
    const b = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 2048 });
    for (let i = 0; i < 30; i++) {
      const w = i % 3 === 0 ? b : a;
      const rec = w.append(entry({ agent: w === a ? 'llm:a' : 'llm:b' }));
      expect(rec.seq).toBe(w.tip.seq);
    }
    expect(readdirSync(dir).filter((f) => f.endsWith('.jsonl')).length).toBeGreaterThan(1); // rotated by both
    expect(a.verify()).toMatchObject({ ok: true, entries: 30 });
    expect(b.query({ agent: 'llm:b', limit: 100 })).toHaveLength(10);
    expect(a.query({ limit: 100 })).toHaveLength(30);
    await a.close();
    b.append(entry());
    expect(b.verify()).toMatchObject({ ok: true, entries: 31 });
    await b.close();
    await store.close();
  });

  test('a line a killed writer left half written is cut by the next append in another trail, and the cut recorded', () => {
    const { dir, keyFile } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile } });
    trail.append(entry());
    appendFileSync(join(dir, 'audit-000001.jsonl'), '{"seq":3,"prev":"ab');
    const rec = trail.append(entry());
    const lines = logLines(dir);
    expect(lines[lines.length - 2]).toMatchObject({ type: 'repair', lost: null, cut: { file: 'audit-000001.jsonl', bytes: 19 } });
    expect(rec.seq).toBe(4);
    expect(trail.verify()).toMatchObject({ ok: true, repairs: 1, entries: 2 });
    trail.close();
  });

  test('a trail opened after the log was reset elsewhere starts the new chain instead of writing into a deleted file', async () => {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    const trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    trail.append(entry());
    const chain = trail.tip.chain;
    expect(() => AuditTrail.reset({ dir, index: store })).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    // What a reset by a process that did not know of this one does: the files go.
    for (const f of readdirSync(dir)) if (f.endsWith('.jsonl')) unlinkSync(join(dir, f));
    trail.append(entry());
    expect(trail.tip.chain).not.toBe(chain);
    expect(logLines(dir).map((l) => l.type)).toEqual(['start', 'entry']);
    trail.close();
    await store.close();
  });

  test('a torn last line is cut under the lock (verify, or the next open) and the cut recorded; the log verifies', () => {
    const { dir, keyFile } = place();
    let trail = AuditTrail.open({ dir, key: { keyFile } });
    for (let i = 0; i < 5; i++) trail.append(entry());
    trail.close();
    const file = join(dir, 'audit-000001.jsonl');
    appendFileSync(file, '{"seq":7,"prev":"ab');
    trail = AuditTrail.open({ dir, key: { keyFile } });
    const lines = logLines(dir);
    expect(lines[lines.length - 1]).toMatchObject({
      type: 'repair',
      lost: null,
      cut: { file: 'audit-000001.jsonl', bytes: 19, sha256: sha('{"seq":7,"prev":"ab') },
    });
    trail.append(entry());
    // A writer killed mid-line while this trail is open: verify takes the log's lock, so the partial line is not
    // one being written, and cuts it.
    appendFileSync(file, '{"seq":9,"pr');
    expect(trail.verify()).toMatchObject({ ok: true, repairs: 2, entries: 6 });
    trail.close();
  });

  test('records cut from the end are reported, live and after reopening (the index remembers them)', async () => {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    let trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    for (let i = 0; i < 10; i++) trail.append(entry());
    const file = join(dir, 'audit-000001.jsonl');
    const text = readFileSync(file, 'utf8');
    const cut = text.lastIndexOf('\n', text.length - 2) + 1; // drop the last record whole
    truncateSync(file, cut);
    expect(trail.verify().firstBad).toMatchObject({ file: 'audit-000001.jsonl', line: 11, damage: 'truncated' });
    trail.close();
    trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    const report = trail.verify();
    expect(report.firstBad).toMatchObject({ file: 'audit-000001.jsonl', line: 11, damage: 'truncated' });
    expect(report.firstBad?.detail).toContain('missing');
    trail.close();
    await store.close();
  });

  test('reset deletes the log and the index; a log deleted without reset is reported as removed', async () => {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    let trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    trail.append(entry());
    trail.close();
    for (const f of readdirSync(dir)) if (f.endsWith('.jsonl')) unlinkSync(join(dir, f));
    trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    expect(trail.verify().firstBad).toMatchObject({ file: 'audit-000001.jsonl', line: 1, damage: 'removed' });
    expect(() => AuditTrail.reset({ dir, index: store })).toThrow(expect.objectContaining({ code: 'EBUSY' }));
    trail.close();
    AuditTrail.reset({ dir, index: store });
    trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    trail.append(entry());
    expect(trail.verify()).toMatchObject({ ok: true, entries: 1 });
    expect(trail.query()).toHaveLength(1);
    trail.close();
    await store.close();
  });
});

describe('opening a long log', () => {
  /** Bytes this process has read through read(2) and its kin so far (page cache included). */
  const bytesRead = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
  /** A trail over a newest file of about 4 MB, closed, with its index. */
  async function longLog() {
    const { dir, keyFile } = place();
    const store = await SqliteStateStore.open({ path: join(dir, '..', 'state.db') });
    const trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    trail.batch(() => {
      for (let i = 0; i < 8000; i++) trail.append(entry({ paths: [`src/file-${i}.ts`] }));
    });
    trail.close();
    // The first open after it looks through what that one long-lived writer appended for rows its index lacks;
    // each later open looks only at what was appended since the one before.
    AuditTrail.open({ dir, key: { keyFile }, index: store }).close();
    const file = join(dir, 'audit-000001.jsonl');
    expect(statSync(file).size).toBeGreaterThan(3_500_000);
    return { dir, keyFile, store, file };
  }
  /** The line number and offset the index holds for `seq`, and the line number that offset has in the file. */
  function placeOf(store: SqliteStateStore, file: string, seq: number) {
    const row = store.database.db.prepare('SELECT line, offset FROM audit_index WHERE seq = ?').get(seq) as { line: number; offset: number };
    const bytes = readFileSync(file);
    let line = 1;
    for (let p = bytes.indexOf(10); p !== -1 && p < row.offset; p = bytes.indexOf(10, p + 1)) line++;
    return { indexed: row.line, actual: line };
  }

  test.runIf(existsSync('/proc/self/io'))(
    "reads the newest file from its index's newest line, not whole; appends go on at the right line numbers",
    async () => {
      const { dir, keyFile, store, file } = await longLog();
      const before = bytesRead();
      const trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
      // The header, the last line and the index's pages: a few KB, where it read the file whole (twice) before.
      expect(bytesRead() - before).toBeLessThan(256 * 1024);
      expect(trail.tip.seq).toBe(8001);
      const next = trail.append(entry());
      trail.close();
      expect(next.seq).toBe(8002);
      expect(placeOf(store, file, 8002)).toEqual({ indexed: 8002, actual: 8002 });
      const again = AuditTrail.open({ dir, key: { keyFile }, index: store });
      expect(again.verify()).toMatchObject({ ok: true, entries: 8001 });
      again.close();
      await store.close();
    },
  );

  test('a torn last line after the indexed one is cut and recorded, and the chain goes on', async () => {
    const { dir, keyFile, store, file } = await longLog();
    appendFileSync(file, '{"seq":8002,"prev":"ab');
    const trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    expect(trail.repaired).toMatchObject({ cut: { file: 'audit-000001.jsonl', bytes: 22 } });
    const next = trail.append(entry());
    expect(trail.verify()).toMatchObject({ ok: true, repairs: 1, entries: 8001 });
    trail.close();
    expect(placeOf(store, file, next.seq)).toEqual({ indexed: 8003, actual: 8003 });
    await store.close();
  });

  test('an index whose newest row does not match the file is not trusted: the file is read whole', async () => {
    const { dir, keyFile, store, file } = await longLog();
    // Line and offset off by one line: the line there is another seq's.
    store.database.db.exec('UPDATE audit_index SET line = line - 1, offset = offset - 400 WHERE seq = 8001');
    const trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    const next = trail.append(entry());
    trail.close();
    expect(next.seq).toBe(8002);
    expect(placeOf(store, file, 8002)).toEqual({ indexed: 8002, actual: 8002 });
    await store.close();
  });
});

describe('a write that fails', () => {
  test('a batch that does not fit under the file-size limit leaves none of its lines, the log verifies, and appends go on', async () => {
    const { dir, keyFile } = place();
    const db = join(dir, '..', 'state.db');
    mkdirSync(dir, { recursive: true });
    // A child process under a 256 KiB file-size limit (EFBIG past it): a batch of 1,000 records (about 400 KB) cannot fit.
    const child = spawnSync(
      'prlimit',
      [`--fsize=${256 * 1024}`, process.execPath, '--conditions=ctxfs-source', join(here, 'support', 'audit-full-disk.ts'), dir, keyFile, db],
      {
        encoding: 'utf8',
      },
    );
    expect(child.status, child.stderr).toBe(0);
    const out = JSON.parse(child.stdout) as { failure: string; agents: string[] };
    expect(out.failure).toBe('EFBIG');
    // Queried in the same process: the three before and the one after, none of the batch (its lines are not in the log).
    expect(out.agents.sort()).toEqual(['llm:after', 'llm:before', 'llm:before', 'llm:before']);
    const store = await SqliteStateStore.open({ path: db });
    const trail = AuditTrail.open({ dir, key: { keyFile }, index: store });
    try {
      const report = trail.verify();
      expect(report.firstBad).toBeUndefined();
      expect(report.ok).toBe(true);
      // The index and the log agree: every record indexed is there and checks out, and nothing the log holds is missing.
      const all = trail.query({ limit: 1000 });
      expect(all.map((r) => r.agent).sort()).toEqual(['llm:after', 'llm:before', 'llm:before', 'llm:before']);
      expect(all.every((r) => r.verified)).toBe(true);
      expect(report.entries).toBe(all.length);
      expect(statSync(join(dir, readdirSync(dir).filter((f) => f.endsWith('.jsonl'))[0] as string)).size).toBeLessThan(64 * 1024);
    } finally {
      trail.close();
      await store.close();
    }
  });
});

describe('the chain key', () => {
  test('created 0600 in a 0700 directory outside the workspace and the log; reused on reopen', () => {
    const { dir, keyFile, workspace } = place();
    const trail = AuditTrail.open({ dir, key: { keyFile } });
    trail.append(entry());
    trail.close();
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(keyFile, '..')).mode & 0o777).toBe(0o700);
    expect(keyFile.startsWith(workspace)).toBe(false);
    expect(keyFile.startsWith(dir)).toBe(false);
    expect(readdirSync(workspace)).toEqual([]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const key = readFileSync(keyFile, 'utf8');
    const again = AuditTrail.open({ dir, key: { keyFile } });
    expect(again.verify().ok).toBe(true);
    again.close();
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    expect(defaultAuditDir('/home/me/project')).toBe('/home/me/.project.ctxfs/audit');
  });

  test('processes creating the key at the same moment all get the one key (none reads a half-written file)', async () => {
    const { keyFile } = place();
    const at = String(Date.now() + 1500);
    const keys = await Promise.all(Array.from({ length: 6 }, () => runWorker<{ key: string }>('key-worker.ts', [keyFile, at])));
    expect(new Set(keys.map((k) => k.key)).size).toBe(1);
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(keys[0]?.key);
    expect(readdirSync(join(keyFile, '..'))).toEqual(['audit.key']);
  });

  test.runIf(process.getuid?.() === 0)('a key provisioned in a directory the process cannot write is read, not re-created', () => {
    // A secret mounted read-only, or a key an administrator placed: loading it must not need to write beside it.
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-audit-key-ro-'));
    try {
      chmodSync(base, 0o755);
      const secrets = join(base, 'secrets');
      mkdirSync(secrets);
      const keyFile = join(secrets, 'audit.key');
      const hex = 'ab'.repeat(32);
      writeFileSync(keyFile, `${hex}\n`, { mode: 0o600 });
      chownSync(keyFile, 65534, 65534);
      chownSync(secrets, 65534, 65534);
      chmodSync(secrets, 0o500);
      const r = spawnSync(process.execPath, ['--conditions=ctxfs-source', join(here, 'support', 'key-worker.ts'), keyFile, '0', '65534'], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual({ key: hex });
      expect(readdirSync(secrets)).toEqual(['audit.key']);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  test('a key inside the log directory, a key others can read and a damaged key file are refused', () => {
    const { dir, keyFile } = place();
    expect(() => AuditTrail.open({ dir, key: { keyFile: join(dir, 'audit.key') } })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    AuditTrail.open({ dir, key: { keyFile } }).close();
    chmodSync(keyFile, 0o644);
    expect(() => AuditTrail.open({ dir, key: { keyFile } })).toThrow(expect.objectContaining({ code: 'EPERM' }));
    writeFileSync(keyFile, 'not a key\n', { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    expect(() => AuditTrail.open({ dir, key: { keyFile } })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });

  test('the MAC is HMAC-SHA256 exactly (short, long and over-long keys; messages past the scratch buffer)', () => {
    for (const keyBytes of [Buffer.alloc(16, 1), Buffer.alloc(32, 2), Buffer.alloc(64, 3), Buffer.alloc(100, 4)]) {
      const key = new ChainKey(keyBytes);
      for (const size of [0, 1, 55, 64, 500, 1024, 5000, 70_000]) {
        const msg = Buffer.from('é'.repeat(size)).subarray(0, size);
        const padded = Buffer.concat([Buffer.from('xx'), msg, Buffer.from('yy')]);
        expect(key.macHex(padded, 2, 2 + size)).toBe(createHmac('sha256', keyBytes).update(msg).digest('hex'));
      }
    }
  });

  test('the log does not verify under another key, and says it is the key', () => {
    const { dir } = place();
    const t = AuditTrail.open({ dir, key: Buffer.alloc(32, 1) });
    t.append(entry());
    t.close();
    const other = AuditTrail.open({ dir, key: Buffer.alloc(32, 2) });
    expect(other.verify().firstBad).toMatchObject({ file: 'audit-000001.jsonl', line: 1, damage: 'wrong-key' });
    other.close();
    // The header's key id edited under the right key: the next line verifies, so it is an edit, not a key.
    const file = join(dir, 'audit-000001.jsonl');
    const text = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      text.replace(/"keyId":"[0-9a-f]/, (m) => `${m.slice(0, -1)}${m.endsWith('0') ? '1' : '0'}`),
    );
    const right = AuditTrail.open({ dir, key: Buffer.alloc(32, 1) });
    expect(right.verify().firstBad).toMatchObject({ file: 'audit-000001.jsonl', line: 1, damage: 'edited' });
    // The right key still appends: the last line verifies under it, so the header was edited, not the key changed.
    right.append(entry());
    right.close();
  });

  test('a trail opened with another key than the log was written with may verify, but never append', () => {
    for (const rotated of [false, true]) {
      const { dir } = place();
      const owner = AuditTrail.open({ dir, key: Buffer.alloc(32, 1), maxFileBytes: 1024 });
      // Rotated: the newest file begins with a rotation header, which names the key too.
      for (let i = 0; i < (rotated ? 8 : 1); i++) owner.append(entry());
      expect(owner.verify().files > 1).toBe(rotated);
      const other = AuditTrail.open({ dir, key: Buffer.alloc(32, 2), maxFileBytes: 1024 });
      const before = readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'latin1')]);
      expect(() => other.append(entry())).toThrow(expect.objectContaining({ code: 'EACCES', message: expect.stringMatching(/written with key [0-9a-f]{16}/) }));
      expect(() => other.batch(() => other.append(entry()))).toThrow(expect.objectContaining({ code: 'EACCES' }));
      expect(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'latin1')])).toEqual(before);
      other.close();
      owner.append(entry());
      expect(owner.verify().ok).toBe(true);
      owner.close();
    }
  });
});
