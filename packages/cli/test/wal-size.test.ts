/** The WAL the CLI leaves for the next process shrinks back after one large edit (journal_size_limit; helper 66's campaign). */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHORT_LIVED_WAL_PAGES } from '../../context/src/state/sqlite-store.ts';
import { ctxfs, useProject } from './support/cli.ts';

// About 4 MB of text compression hardly shrinks: its version in the history is a large transaction.
const BIG = Array.from({ length: 150_000 }, (_, i) => `row ${i} ${randomBytes(8).toString('hex')}`).join('\n');

describe('the WAL after one large edit', { timeout: 60_000 }, () => {
  const project = useProject({ 'big.txt': `${BIG}\n`, 'a.txt': 'a\n' });

  it(`shrinks back to about ${SHORT_LIVED_WAL_PAGES} pages once later commands have folded it in`, () => {
    const r = ctxfs(project, ['replace', 'big.txt', 'row 5 ', 'row five ']);
    expect(r.status, r.stderr).toBe(0);
    for (let i = 0; i < 6; i++) expect(ctxfs(project, ['cat', 'a.txt']).status).toBe(0);
    const wal = statSync(join(project.base, '.proj.ctxfs', 'state.db-wal')).size;
    expect(wal).toBeLessThanOrEqual(2 * SHORT_LIVED_WAL_PAGES * (4096 + 24) + 32);
  });
});
