/**
 * Several processes (own context, own session, one shared state database,
 * the host backend's cross-process locks) edit one file at once. Each only
 * ever changes its own line; any lost update shows as a counter that went
 * back, which the workers check before every edit.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { describe, expect, it } from 'vitest';
import { createContext } from '../src/index.ts';
import { runWorker } from './support/run-worker.ts';

const WORKERS = 3;
const ROUNDS = 40;

describe('edits from several processes (host)', () => {
  // Through a link (`link -> real`), the workers name one file two ways; before, each spelling took its own lock and lost updates.
  it.each([
    ['one spelling', 'shared.txt', ['shared.txt']],
    ['two spellings of one file, through a link', 'real/shared.txt', ['real/shared.txt', 'link/shared.txt']],
  ])(
    'no update is lost, and files and versions agree (%s)',
    async (name, file, spellings) => {
      const base = mkdtempSync(join(tmpdir(), 'ctxfs-procs-'));
      const root = join(base, 'ws');
      mkdirSync(join(root, 'real'), { recursive: true });
      symlinkSync('real', join(root, 'link'));
      const lines = Array.from({ length: WORKERS }, (_, w) => `w${w}=0\nfiller ${w}\n`).join('');
      writeFileSync(join(root, file), lines);
      const db = join(base, 'state.db');
      const stateDir = join(base, 'host-state');
      const lockDir = join(base, 'locks');
      try {
        const results = await Promise.all(
          Array.from({ length: WORKERS }, (_, w) =>
            runWorker<{ refused: number; merged: number }>('edit-worker.ts', [
              root,
              db,
              stateDir,
              lockDir,
              String(w),
              String(ROUNDS),
              spellings[w % spellings.length] as string,
            ]),
          ),
        );
        const final = readFileSync(join(root, file), 'utf8');
        for (let w = 0; w < WORKERS; w++) expect(final).toContain(`w${w}=${ROUNDS}\n`);
        const fs = await HostFilesystem.open({ root, stateDir, durability: 'none', locks: { dir: lockDir } });
        const ctx = await createContext({ fs, store: db });
        expect(await ctx.journal.pending()).toEqual([]);
        const history = await ctx.history(file, 10_000);
        // Every successful edit is one version; nothing recorded twice or external.
        expect(history.filter((v) => v.op !== 'initial')).toHaveLength(WORKERS * ROUNDS);
        expect(history.some((v) => v.op === 'external')).toBe(false);
        expect(history[0]?.sha256).toBe((await ctx.getVersion(file, 'disk')).sha256);
        const refused = results.reduce((n, r) => n + r.refused, 0);
        const merged = results.reduce((n, r) => n + r.merged, 0);
        console.log(`[processes, ${name}] ${WORKERS} workers × ${ROUNDS} edits: ${merged} merged, ${refused} refused and retried`);
        expect(merged).toBeGreaterThan(0);
        await ctx.close();
        await fs.close();
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
