/**
 * The audit log survives SIGKILL: a child process appends records (some
 * large enough that a kill can cut the write, with frequent rotations and
 * retention) and is killed 200 times at random moments. After each kill the
 * log is reopened — a torn last line is cut and the cut recorded — and must
 * verify, with no acknowledged record lost and the index agreeing with it.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { AuditTrail, SqliteStateStore } from '../src/index.ts';
import { runAndKill } from './support/kill-child.ts';

const here = dirname(fileURLToPath(import.meta.url));
const KILLS = 200;

describe('audit log after SIGKILL', () => {
  test(`${KILLS} kills at random moments: the log always verifies after reopening`, async () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-audit-crash-'));
    const dir = join(base, 'audit');
    const keyFile = join(base, 'state-home', 'audit.key');
    const db = join(base, 'state.db');
    let lastSeq = 0;
    let repairs = 0;
    let torn = 0;
    try {
      for (let round = 0; round < KILLS; round++) {
        // Compiled code cached across the 200 children: each starts in tens of milliseconds instead of hundreds.
        await runAndKill(
          join(here, 'support', 'audit-crash-child.ts'),
          [dir, keyFile, db],
          { minMs: 0, spreadMs: 60 },
          {
            ...process.env,
            NODE_COMPILE_CACHE: join(base, 'compile-cache'),
          },
        );

        const store = await SqliteStateStore.open({ path: db });
        const trail = AuditTrail.open({ dir, key: { keyFile }, index: store, maxFileBytes: 192 * 1024, retainFiles: 4 });
        const report = trail.verify();
        expect(report.firstBad, `round ${round}`).toBeUndefined();
        expect(report.ok).toBe(true);
        // Nothing acknowledged before the previous reopen is gone: the chain only grows.
        expect(report.lastSeq).toBeGreaterThanOrEqual(lastSeq);
        lastSeq = report.lastSeq;
        if (trail.repaired !== undefined) {
          expect(trail.repaired.lost).toBeNull();
          torn++;
        }
        repairs = report.repairs;
        // The index holds exactly the entries of the kept files.
        expect(trail.query({ limit: 1_000_000 }).length).toBe(report.entries);
        trail.close();
        await store.close();
      }
      console.log(`[audit sigkill] ${KILLS} kills; chain at seq ${lastSeq}; ${torn} reopenings cut a torn line (${repairs} repair records in the kept files)`);
      // Every child appended at least one record before its kill, and none was lost.
      expect(lastSeq).toBeGreaterThanOrEqual(KILLS);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }, 600_000);
});
