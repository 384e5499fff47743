/** A hint runs on the state its command used, whichever of --state, --store and CTXFS_STATE named it (helper 66's campaign). */
import { readFileSync, writeFileSync } from 'node:fs';
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

describe('the audit hints the context layer writes', { timeout: 60_000 }, () => {
  const project = useProject({ 'long.txt': `${LONG}\n` });
  /** A state in `dir` whose trail has two reads, the second line then edited; its path. */
  const changedTrail = (dir: string): string => {
    const state = join(project.base, dir, 'state.db');
    for (const lines of ['1:2', '2:3']) expect(ctxfs(project, ['--state', state, 'cat', 'long.txt', '--lines', lines]).status).toBe(0);
    const log = join(project.base, dir, 'audit', 'audit-000001.jsonl');
    const rows = readFileSync(log, 'utf8').split('\n');
    rows[1] = (rows[1] ?? '').replace(/"op":"[A-Za-z]+"/, '"op":"nothing"');
    writeFileSync(log, rows.join('\n'));
    return state;
  };

  it('after `ctxfs --state S audit` meets a changed trail, the `ctxfs audit verify` its hint names verifies the trail of S', () => {
    const state = changedTrail('custom');
    const r = ctxfs(project, ['--json', '--state', state, 'audit']);
    expect(r.status).not.toBe(0);
    const hint = (JSON.parse(r.stdout) as { error: { hint: string } }).error.hint;
    const verify = /`(ctxfs [^`]*audit verify)`/.exec(hint)?.[1];
    expect(verify, hint).toBeDefined();
    // Pasted from the same directory, it must find the change (exit 1), not verify the default state's trail.
    const followed = pasted(project, verify ?? '');
    expect(followed.status, followed.stdout).toBe(1);
  });

  it("the warning another command prints on S's changed trail names the verify of S's trail", () => {
    const state = changedTrail('warned');
    const r = ctxfs(project, ['--state', state, 'cat', 'long.txt', '--lines', '1:1']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('CTXFS_AUDIT_DAMAGED');
    const verify = /`(ctxfs [^`]*audit verify)`/.exec(r.stderr)?.[1];
    expect(verify, r.stderr).toContain('--state');
    const followed = pasted(project, verify ?? '');
    expect(followed.status, followed.stdout).toBe(1);
  });
});
