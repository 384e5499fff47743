/**
 * How an audit row is appended to the chain (issue 21): SQLite links and
 * hashes it in the process, PostgreSQL in the server, in the statement that
 * inserts it, so an append waits for one round trip. Either way a row's hash
 * is what `auditHash` makes of its link and values, whatever text the values
 * hold, and rows of both kinds verify as one chain. PostgreSQL runs at
 * CTXFS_TEST_POSTGRES_URL (a schema of this file's, dropped after).
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { AUDIT_GENESIS, AUDIT_HEAD, auditHash, auditJson, CHAINED_COLUMNS } from '../src/state/audit-chain.ts';
import { PostgresStateStore } from '../src/state/postgres-store.ts';
import { SqliteStateStore } from '../src/state/sqlite-store.ts';
import type { AuditRowInput, SqlRow, SqlValue, StateStore } from '../src/state/state-store.ts';
import { auditInsert, auditValues } from '../src/state/state-store.ts';
import { countRoundTrips } from './support/pg-round-trips.ts';

const PG_URL = process.env.CTXFS_TEST_POSTGRES_URL;
// In CI the PostgreSQL cases must run: a missing server fails the run, never a silent skip (./run-tests sets the URL).
if (PG_URL === undefined && process.env.CI)
  throw new Error('CTXFS_TEST_POSTGRES_URL is not set: bash .ci/system-deps.sh starts PostgreSQL and ./run-tests passes its URL');
const dir = mkdtempSync(join(tmpdir(), 'ctxfs-audit-append-'));
const PREFIX = `ctxfs_audit_append_${process.pid}_${Date.now().toString(36)}`;
const schemas: string[] = [];
let made = 0;

function withSchema(url: string, schema: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
}

interface Subject {
  readonly name: string;
  /** A new store on data of its own, and a second one on the same data (another host; SQLite's is the same store). */
  pair(): Promise<[StateStore, StateStore]>;
}

const subjects: Subject[] = [
  {
    name: 'SQLite file',
    async pair() {
      const store = await SqliteStateStore.open({ path: join(dir, `s${++made}.db`) });
      onTestFinished(() => store.close());
      return [store, store];
    },
  },
];
if (PG_URL !== undefined) {
  subjects.push({
    name: 'PostgreSQL',
    async pair() {
      const schema = `${PREFIX}_${++made}`;
      schemas.push(schema);
      const a = await PostgresStateStore.open({ url: withSchema(PG_URL, schema) });
      onTestFinished(() => a.close());
      const b = await PostgresStateStore.open({ url: withSchema(PG_URL, schema) });
      onTestFinished(() => b.close());
      return [a, b];
    },
  });
}

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (PG_URL === undefined || schemas.length === 0) return;
  const admin = await PostgresStateStore.open({ url: withSchema(PG_URL, `${PREFIX}_admin`) }).catch(() => undefined);
  if (admin === undefined) return;
  for (const schema of [...schemas, `${PREFIX}_admin`]) await admin.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.close();
});

/** Text that JSON escapes, or that is more than one UTF-8 byte or UTF-16 unit a character. */
const AWKWARD: readonly AuditRowInput[] = [
  { op: 'read', path: 'src/ünïcødé 日本語.ts', agent: 'llm:😀', sessionId: 'it\'s "quoted"', result: 'ok', tokens: 7 },
  { op: 'replace', path: 'C:\\dir\\file.ts', params: { old: 'a\\nb', new: 'line 1\nline 2\r\n\ttab' }, result: 'ok', changeId: 'c\\1' },
  { op: 'write', path: 'emoji 👍🏽👨‍👩‍👧.md', params: { text: '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u2028\u2029 \u007f' }, result: 'denied' },
  // Lone surrogates: in the params JSON keeps them as escapes; in a column either database stores U+FFFD.
  { op: 'read', params: { lone: 'a\ud800b\udc00c' }, result: 'ok' },
  { op: 'read', path: 'half \ud83d.ts', agent: '\udc00llm', result: 'ok \ud800\ud800' },
  { op: 'read', path: 'back\\slash \'single\' "double" `tick` $1 ?', agent: '\n', result: 'line\nbreak', tokens: 0 },
];

/** The rows of the `audit` table in id order, their chained values as the hash takes them. */
async function chainRows(store: StateStore): Promise<Array<{ values: SqlValue[]; prev: string; hash: string }>> {
  const rows = await store.all(`SELECT ${CHAINED_COLUMNS.join(', ')}, prev, hash FROM audit ORDER BY id`);
  return rows.map((row: SqlRow) => ({
    values: CHAINED_COLUMNS.map((c) => ((c === 'at_ms' || c === 'tokens') && row[c] !== null ? Number(row[c]) : (row[c] as SqlValue))),
    prev: String(row.prev),
    hash: String(row.hash),
  }));
}

test('auditHash is SHA-256 over the link, a newline and the values as JSON, lone surrogates as U+FFFD and bigints as numbers', () => {
  // The formula rows were hashed with before auditJson took a plain stringify for plain values: every row written since must verify.
  const spelled = (prev: string, values: readonly SqlValue[]) =>
    createHash('sha256')
      .update(prev)
      .update('\n')
      .update(JSON.stringify(values, (_key, v: unknown) => (typeof v === 'bigint' ? Number(v) : typeof v === 'string' ? v.toWellFormed() : v)))
      .digest('hex');
  const rows: SqlValue[][] = [
    ...AWKWARD.map(auditValues),
    [1.5, 'readFile', 'src/a.ts', 'llm:x', 's', '{"a":1}', 'ok', 395, null],
    [12n, 'read', 'lone \ud800', null, null, null, 'ok', 3n, null],
    [1, 'read', null, null, null, new Uint8Array([1, 2]) as SqlValue, 'ok', null, null],
  ];
  let prev = AUDIT_GENESIS;
  for (const values of rows) {
    expect(auditHash(prev, values)).toBe(spelled(prev, values));
    prev = auditHash(prev, values);
  }
});

describe.each(subjects)('audit append: $name', (subject) => {
  test('rows of text JSON escapes or writes in several bytes link, hash as auditHash does, and verify', async () => {
    const [store] = await subject.pair();
    await store.audit(AWKWARD.slice(0, 2));
    for (const row of AWKWARD.slice(2)) await store.audit(row);
    await store.transaction(async () => {
      await store.audit(AWKWARD[0] as AuditRowInput);
      await store.audit(AWKWARD.slice(1));
    });
    const rows = await chainRows(store);
    expect(rows).toHaveLength(2 * AWKWARD.length);
    let prev = AUDIT_GENESIS;
    for (const [i, row] of rows.entries()) {
      const given = AWKWARD[i % AWKWARD.length] as AuditRowInput;
      // Written as given (the time aside; a lone surrogate as U+FFFD), so the hash covers what the caller recorded.
      expect(row.values.slice(1)).toEqual(
        auditValues(given)
          .slice(1)
          .map((v) => (typeof v === 'string' ? v.toWellFormed() : v)),
      );
      expect(row.prev).toBe(prev);
      expect(row.hash).toBe(auditHash(prev, row.values));
      prev = row.hash;
    }
    expect(await store.verifyAudit()).toMatchObject({ ok: true, records: rows.length, head: { hash: prev } });
  });

  test('two stores (hosts) appending single rows and batches at once keep one chain', async () => {
    const [a, b] = await subject.pair();
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < 30; i++) {
      writes.push(a.audit({ op: 'a', path: `a${i}.ts`, result: 'ok', tokens: i }));
      writes.push(b.audit([0, 1, 2].map((k) => ({ op: 'b', path: `b${i}.ts`, params: { k, text: 'ü😀\\"' }, result: 'ok', tokens: k }))));
      writes.push(
        b.transaction(async () => {
          await b.audit({ op: 'c', path: `c${i}.ts`, result: 'ok' });
          await b.audit({ op: 'c', path: `c${i}.ts`, result: 'again' });
        }),
      );
    }
    await Promise.all(writes);
    expect(await a.verifyAudit()).toMatchObject({ ok: true, records: 180 });
    const rows = await chainRows(a);
    // A batch is appended together, in order.
    const ops = rows.map((r) => `${r.values[1]}:${r.values[2]}:${r.values[7]}`);
    for (let i = 0; i < 30; i++) expect(ops.indexOf(`b:b${i}.ts:0`) + 2).toBe(ops.indexOf(`b:b${i}.ts:2`));
  });
});

describe.skipIf(PG_URL === undefined)('audit append on PostgreSQL', () => {
  /** A store on a schema of its own. */
  const open = async (): Promise<PostgresStateStore> => {
    const schema = `${PREFIX}_${++made}`;
    schemas.push(schema);
    const store = await PostgresStateStore.open({ url: withSchema(PG_URL as string, schema) });
    onTestFinished(() => store.close());
    return store;
  };

  const roundTrips = (fn: () => Promise<unknown>) => countRoundTrips(pg, fn);

  test('an append waits for one round trip: BEGIN and the lock, its rows and COMMIT go out together', async () => {
    const store = await open();
    // Warm: the pool's connection is open and the statement prepared.
    await store.audit({ op: 'warm', result: 'ok' });
    const one = await roundTrips(() => store.audit({ op: 'read', path: 'a.ts', agent: 'llm:a', sessionId: 's', params: { n: 1 }, result: 'ok', tokens: 3 }));
    expect(one.waited).toBe(1);
    expect(one.statements).toHaveLength(3);
    const batch = await roundTrips(() => store.audit(Array.from({ length: 70 }, (_, i) => ({ op: 'batch', path: `b${i}.ts`, result: 'ok', tokens: i }))));
    // BEGIN and the lock, 64 rows chained in one statement, the other 6 in another, COMMIT.
    expect(batch.waited).toBe(1);
    expect(batch.statements).toHaveLength(4);
    expect(await store.verifyAudit()).toMatchObject({ ok: true, records: 72 });
  });

  test("an audit in a transaction (an edit's record) adds no wait to it", async () => {
    const store = await open();
    await store.run('CREATE TABLE things (k TEXT PRIMARY KEY, n BIGINT)');
    const edit = (k: string, audits: boolean) =>
      store.transaction(async () => {
        const row = await store.get<{ n: number }>('SELECT COUNT(*) AS n FROM things');
        await store.write('INSERT INTO things (k, n) VALUES (?, ?)', [k, Number(row?.n)]);
        if (audits) {
          await store.audit({ op: 'edit', path: `${k}.ts`, result: 'ok', changeId: k });
          await store.audit({ op: 'edit-more', path: `${k}.ts`, result: 'ok' });
        }
      });
    await edit('warm-plain', false);
    await edit('warm-audited', true);
    const plain = await roundTrips(() => edit('plain', false));
    const audited = await roundTrips(() => edit('audited', true));
    expect(plain.waited).toBe(2);
    expect(audited.waited).toBe(plain.waited);
    expect(audited.statements).toHaveLength(plain.statements.length + 2);
    expect(await store.verifyAudit()).toMatchObject({ ok: true, records: 4 });
  });

  test('rows linked and hashed in the process (as SQLite and earlier builds append) and in the server verify as one chain', async () => {
    const store = await open();
    // As the process appends: the head read, the hash made here.
    const inProcess = async (entries: readonly AuditRowInput[]) => {
      await store.transaction(async () => {
        let prev = (await store.get<{ hash: string }>(AUDIT_HEAD))?.hash ?? AUDIT_GENESIS;
        const params: SqlValue[] = [];
        for (const entry of entries) {
          const values = auditValues(entry);
          const hash = auditHash(prev, values);
          params.push(...values, prev, hash);
          prev = hash;
        }
        await store.run(auditInsert(entries.length), params);
      });
    };
    await inProcess(AWKWARD.slice(0, 2));
    await store.audit(AWKWARD.slice(2));
    await inProcess(AWKWARD.slice(0, 1));
    await store.audit(AWKWARD.slice(1, 2));
    const rows = await chainRows(store);
    expect(rows).toHaveLength(AWKWARD.length + 2);
    let prev = AUDIT_GENESIS;
    for (const row of rows) {
      expect(row.prev).toBe(prev);
      expect(row.hash).toBe(auditHash(prev, row.values));
      prev = row.hash;
    }
    expect(await store.verifyAudit()).toMatchObject({ ok: true, records: AWKWARD.length + 2 });
  });

  test('the server hashes the same bytes auditJson writes', async () => {
    const store = await open();
    for (const entry of AWKWARD) {
      const values = auditValues(entry);
      const json = auditJson(values);
      const row = await store.get<{ hash: string }>("SELECT encode(sha256(convert_to(? || chr(10), 'UTF8') || ?::bytea), 'hex') AS hash", [
        AUDIT_GENESIS,
        Buffer.from(json, 'utf8'),
      ]);
      expect(row?.hash).toBe(auditHash(AUDIT_GENESIS, values));
    }
  });
});
