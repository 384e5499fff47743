/**
 * Several processes recording into one audit trail at once — a CLI command
 * beside an MCP server beside a library user — each with its own handle on
 * the state store: the chain stays one chain that verifies, the index
 * agrees with the log, and a writer SIGKILLed in the middle of the run
 * costs nothing the others wrote.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { AuditTrail, SqliteStateStore } from '../src/index.ts';
import { runAndKill } from './support/kill-child.ts';
import { runWorker } from './support/run-worker.ts';

const here = dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(join(tmpdir(), 'ctxfs-audit-processes-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const WRITERS = 4;
const RECORDS = 250;

describe('one audit trail, several processes', () => {
  test(`${WRITERS} processes × ${RECORDS} records at once, and one killed mid-run: one chain, every record indexed`, async () => {
    const dir = join(base, 'audit');
    const keyFile = join(base, 'state-home', 'audit.key');
    const db = join(base, 'state.db');
    const args = (name: string, count: number) => [dir, keyFile, db, name, String(count)];
    const [results] = await Promise.all([
      Promise.all(Array.from({ length: WRITERS }, (_, w) => runWorker<{ appended: number }>('audit-writer.ts', args(`w${w}`, RECORDS)))),
      runAndKill(join(here, 'support', 'audit-writer.ts'), args('killed', 0), { minMs: 100, spreadMs: 400 }),
    ]);
    expect(results.map((r) => r.appended)).toEqual(Array(WRITERS).fill(RECORDS));

    const store = await SqliteStateStore.open({ path: db });
    const trail = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 64 * 1024 });
    const report = trail.verify();
    expect(report.firstBad).toBeUndefined();
    expect(report.ok).toBe(true);
    for (let w = 0; w < WRITERS; w++) expect(trail.query({ agent: `llm:w${w}`, limit: 10_000 })).toHaveLength(RECORDS);
    const killed = trail.query({ agent: 'llm:killed', limit: 10_000 }).length;
    // Every entry the log holds is in the index, and read back from where the index says.
    const all = trail.query({ limit: 100_000 });
    expect(all).toHaveLength(WRITERS * RECORDS + killed);
    expect(all.every((r) => r.verified)).toBe(true);
    expect(report.entries).toBe(all.length);
    expect(trail.rebuildIndex()).toBe(all.length);
    trail.close();
    await store.close();
  }, 120_000);
});
