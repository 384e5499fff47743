import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, pasted, useProject } from './support/cli.ts';

// `ctxfs audit` names each record's session, and that name is what --session takes. It showed the first 8 characters
// of the id ("session c0b233b9"), which --session does not match: `audit --session c0b233b9` said "no records", and
// `audit rollback --session c0b233b9` reverted nothing and exited 0.
describe('the session ctxfs audit shows', () => {
  const project = useProject();

  it('finds the records and rolls back the changes of that session when passed to --session', () => {
    const changed = ctxfs(project, ['replace', 'notes.txt', 'draft', 'final']);
    expect(changed.status, changed.stderr).toBe(0);
    const listed = ctxfs(project, ['audit', '--op', 'replace', '--limit', '1']);
    expect(listed.status).toBe(0);
    const session = / session (\S+)$/.exec(listed.stdout.trim())?.[1] ?? '';
    expect(session, listed.stdout).not.toBe('');

    const records = pasted(project, `ctxfs audit --session ${session}`);
    expect(records.status).toBe(0);
    expect(records.stdout).toContain('replace notes.txt ok');

    const back = pasted(project, `ctxfs audit rollback --session ${session}`);
    expect(back.status, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/: 1 change, 1 file change reverted, 0 refused/);
    expect(readFileSync(join(project.root, 'notes.txt'), 'utf8')).toBe('status: draft\n');
  });
});
