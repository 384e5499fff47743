import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, pasted, useProject } from './support/cli.ts';

// A snapshot's tag is a name to type again: `snapshot create ''` made a snapshot tagged '', and then an empty
// argument — `ctxfs snapshot restore "$SNAP"` with SNAP unset — named it and put the whole workspace back. A tag with a
// line break or an escape sequence broke `snapshot list`'s one line per snapshot and wrote the sequence to the terminal.
describe('snapshot names', () => {
  const project = useProject();
  const run = (args: readonly string[]) => ctxfs(project, args);

  it.each([[''], ['   '], ['a\nb'], ['red\u001b[31m']])('snapshot create %j is refused (exit 2), and its hint runs', (tag) => {
    const r = run(['snapshot', 'create', tag]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^ctxfs: EINVAL: snapshot create: /);
    expect(run(['--json', 'snapshot', 'list']).json<{ snapshots: unknown[] }>().snapshots).toEqual([]);
    const hint = /ctxfs snapshot create [a-z-]+/.exec(r.stderr)?.[0];
    expect(hint, r.stderr).toBeDefined();
    const followed = pasted(project, hint ?? '');
    expect(followed.status, followed.stderr).toBe(0);
    expect(run(['snapshot', 'drop', hint?.split(' ').at(-1) ?? '']).status).toBe(0);
  });

  it('an empty name restores and drops nothing', () => {
    const taken = run(['--json', 'snapshot', 'create']);
    expect(taken.status, taken.stderr).toBe(0);
    const file = join(project.root, 'notes.txt');
    writeFileSync(file, 'status: final\n');
    for (const action of ['restore', 'drop']) {
      const r = run(['snapshot', action, '']);
      expect(r.status, `${action}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('ctxfs snapshot list');
    }
    expect(readFileSync(file, 'utf8')).toBe('status: final\n');
    expect(run(['--json', 'snapshot', 'list']).json<{ snapshots: unknown[] }>().snapshots).toHaveLength(1);
  });

  // The trail recorded a restore or drop of a name no snapshot has as 'error EUNKNOWN': the CLI's own error carried
  // its code, which the guard took only from a protocol error.
  it('a name no snapshot has is not found (exit 3), and the trail records why', () => {
    for (const [action, op] of [
      ['restore', 'restoreSnapshot'],
      ['drop', 'dropSnapshot'],
    ] as const) {
      const r = run(['snapshot', action, 'no-such-snapshot']);
      expect(r.status, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/^ctxfs: ENOSNAPSHOT: no snapshot has the id or tag 'no-such-snapshot'/);
      const [record] = run(['--json', 'audit', '--op', op, '--limit', '1']).json<{ records: Array<{ result: string; code?: string }> }>().records;
      expect(record, op).toMatchObject({ result: 'error', code: 'ENOSNAPSHOT' });
    }
  });
});
