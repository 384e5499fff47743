import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorJson } from '../src/schemas.ts';
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

// `ctxfs audit rollback --session <id>` with an id no session ever had (a typo, a session of another workspace)
// answered "session nope: 0 changes, 0 file changes reverted, 0 refused" and exited 0, as if there was nothing to undo.
describe('ctxfs audit rollback of a session or an agent that never was', () => {
  const project = useProject();

  it('is not found (exit 3), names the session, and its hint lists the sessions when pasted', () => {
    const changed = ctxfs(project, ['replace', 'notes.txt', 'draft', 'final']);
    expect(changed.status, changed.stderr).toBe(0);
    // From the parent directory, so the hint must carry the workspace it was given for.
    const r = ctxfs(project, ['-C', 'proj', 'audit', 'rollback', '--session', 'no-such-session'], { cwd: project.base });
    expect(r.status, r.stdout + r.stderr).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('ENOSESSION');
    expect(r.stderr).toContain("'no-such-session'");
    const hint = /`(ctxfs [^`]+)`/.exec(r.stderr)?.[1] ?? '';
    expect(hint, r.stderr).not.toBe('');
    const listed = pasted(project, hint, { cwd: project.base });
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/replace notes\.txt ok .*session \S+/);
    expect(readFileSync(join(project.root, 'notes.txt'), 'utf8')).toBe('status: final\n');
  });

  it('is the same exit code with --json, as {error} of code ENOSESSION', () => {
    const r = ctxfs(project, ['audit', 'rollback', '--session', 'no-such-session', '--json']);
    expect(r.status, r.stderr).toBe(3);
    const { error } = r.json<{ error: { code: string; message: string; hint?: string } }>();
    expect(error.code).toBe('ENOSESSION');
    expect(error.message).toContain("'no-such-session'");
    expect(errorJson.safeParse({ error }).success).toBe(true);
  });

  it('is the same for an agent that never acted: exit 3, ENOAGENT, and a known agent without changes is still 0', () => {
    const r = ctxfs(project, ['audit', 'rollback', '--agent', 'llm:nobody']);
    expect(r.status, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toContain('ENOAGENT');
    expect(r.stderr).toContain("'llm:nobody'");
    const hint = /`(ctxfs [^`]+)`/.exec(r.stderr)?.[1] ?? '';
    const listed = pasted(project, hint);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/ cli replace notes\.txt ok /);
    expect(ctxfs(project, ['--agent', 'llm:reader', 'cat', 'notes.txt']).status).toBe(0);
    const none = ctxfs(project, ['audit', 'rollback', '--agent', 'llm:reader', '--json']);
    expect(none.status, none.stderr).toBe(0);
    expect(none.json()).toMatchObject({ changes: 0, reverted: 0, refused: 0 });
  });
});
