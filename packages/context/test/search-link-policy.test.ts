/**
 * A search scoped by a link's name is decided by the policy on that name as
 * well as on where it leads, as a read through the same name is. A rule
 * denying `latest/` (a link to `v2`) refused `readFile('latest/a.txt')` but
 * let `listFiles('latest')` answer "no files (ignored paths left out …)"
 * and `grep` "no matches": wrong answers, with a hint to include ignored
 * paths that finds nothing either. The session resolved the scope's
 * spelling and did not give it to the policy.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { testState } from './support/test-state.ts';

describe('a search scoped through a link the policy denies by name', () => {
  const root = mkdtempSync(join(tmpdir(), 'ctxfs-search-link-'));
  let fs: HostFilesystem;
  let ctx: ContextLayer;
  beforeAll(async () => {
    mkdirSync(join(root, 'v2'));
    writeFileSync(join(root, 'v2/a.txt'), 'hello\n');
    symlinkSync('v2', join(root, 'latest'));
    fs = await HostFilesystem.open({ root });
    ctx = await createContext({ fs, store: testState(), safety: { policyFiles: false, policy: { rules: [{ effect: 'deny', paths: ['latest/'] }] } } });
  });
  afterAll(async () => {
    await ctx.close();
    await fs.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('is refused as a read through it is', async () => {
    const s = ctx.session({ agent: 'llm:test' });
    for (const call of [
      () => s.readFile('latest/a.txt'),
      () => s.listFiles('latest'),
      () => s.grep('hello', { path: 'latest' }),
      () => s.glob('*.txt', { cwd: 'latest' }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'EDENIED' });
    }
    // Where it leads, by its own name, is not what the rule names.
    // (Its rows are named relative to the directory listed.)
    expect((await s.listFiles('v2')).text).toMatch(/^listFiles v2: 1 file, paths relative to v2\/\.\n<file path="v2"[^\n]*>\na\.txt {2}/);
  });
});
