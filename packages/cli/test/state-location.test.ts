/**
 * `ctxfs --state <location>` where the location cannot hold the state store
 * says what is there and what to name: a directory is EISDIR (it said EIO
 * "unable to open database file", "check that the state directory is
 * writable"), and the file its hint names works; a file that is not a
 * database is refused with a code, not SQLite's bare message.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, useProject } from './support/cli.ts';

describe('--state naming what cannot be a state file', { timeout: 60_000 }, () => {
  const project = useProject({ 'x.txt': 'hello\n' });

  it('a directory is EISDIR, and the --state its hint names reads the file', () => {
    const dir = join(project.base, 'somedir');
    mkdirSync(dir);
    const r = ctxfs(project, ['--json', '--state', dir, 'cat', 'x.txt']);
    expect(r.status).not.toBe(0);
    const error = (JSON.parse(r.stdout) as { error: { code: string; path: string; hint: string } }).error;
    expect(error.code).toBe('EISDIR');
    expect(error.path).toBe(dir);
    expect(error.hint).not.toContain('writable');
    const named = /'([^']+)'/.exec(error.hint)?.[1];
    expect(named).toBe(join(dir, 'state.db'));
    const again = ctxfs(project, ['--state', named ?? '', 'cat', 'x.txt']);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain('hello');
  });

  it('a file that is not a database is EINVAL and left as it was', () => {
    const file = join(project.base, 'notes.txt');
    const text = 'notes, not a database; long enough for SQLite to read a header from it\n'.repeat(10);
    writeFileSync(file, text);
    const r = ctxfs(project, ['--state', file, 'cat', 'x.txt']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('EINVAL');
    expect(r.stderr).toContain('not a SQLite database');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });
});
