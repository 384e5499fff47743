/** A hint runs on the state its command used, whichever of --state, --store and CTXFS_STATE named it (helper 66's campaign). */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, pasted, useProject } from './support/cli.ts';

const LONG = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\n');

describe('--state and --store together', { timeout: 60_000 }, () => {
  const project = useProject({ 'long.txt': `${LONG}\n` });
  const reads = (state: string): number => {
    const r = ctxfs(project, ['--json', '--state', state, 'audit', '--path', 'long.txt']);
    expect(r.status, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { records: unknown[] }).records.length;
  };

  it('typed --state A --store B: the command runs on A, and so does its hint', () => {
    const [a, b] = [join(project.base, 'a', 'state.db'), join(project.base, 'b', 'state.db')];
    const r = ctxfs(project, ['--json', '--state', a, '--store', b, '-p', 'small', 'cat', 'long.txt']);
    expect(r.status, r.stderr).toBe(0);
    expect(reads(a)).toBe(1);
    const next = (JSON.parse(r.stdout) as { next: string }).next;
    expect(pasted(project, next).status).toBe(0);
    expect(reads(a)).toBe(2);
  });

  it('CTXFS_STATE=A with --store B typed: the command runs on A (the variable wins), and so does its hint', () => {
    const [a, b] = [join(project.base, 'envA', 'state.db'), join(project.base, 'typedB', 'state.db')];
    const env = { CTXFS_STATE: a };
    const r = ctxfs(project, ['--json', '--store', b, '-p', 'small', 'cat', 'long.txt'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect(reads(a)).toBe(1);
    const next = (JSON.parse(r.stdout) as { next: string }).next;
    expect(pasted(project, next, { env }).status).toBe(0);
    expect(reads(a)).toBe(2);
  });
});
