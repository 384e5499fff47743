/**
 * Campaign on the trailing-slash rule from the shell: `ctxfs cat a.txt/`
 * and the commands that change a file refuse a slashed name (exit 1,
 * ENOTDIR, the fix named) and change nothing.
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, useProject } from './support/cli.ts';

describe('a name ending in "/" from the shell', { timeout: 60_000 }, () => {
  const project = useProject({ 'a.txt': 'a\n', 'd/x.txt': 'x\n' });

  it('cat, cat --lines, replace, undo, history and call write_file refuse it as ENOTDIR, and nothing is written', () => {
    for (const args of [
      ['cat', 'a.txt/'],
      ['cat', 'a.txt/', '--lines', '1:1'],
      ['replace', 'a.txt/', 'a', 'b'],
      ['replace', 'new/', 'a', 'b'],
      ['undo', 'a.txt/'],
      ['history', 'a.txt/'],
      ['call', 'write_file', '{"path":"new/","content":"n\\n"}'],
      ['call', 'read_file', '{"path":"a.txt/"}'],
    ]) {
      const r = ctxfs(project, ['--json', ...args]);
      expect(r.status, `${args.join(' ')}: ${r.stdout}`).toBe(1);
      // A read answers { error }; an edit its result, { success: false, code, message }.
      type Said = { code: string; hint?: string; message: string };
      const body = JSON.parse(r.stdout) as { error?: Said } & Partial<Said> & { success?: boolean };
      const error = body.error ?? (body as Said);
      if (body.error === undefined) expect(body.success, args.join(' ')).toBe(false);
      expect(error.code, args.join(' ')).toBe('ENOTDIR');
      expect(`${error.message} ${error.hint ?? ''}`, args.join(' ')).toMatch(/remove the trailing slash: "(a\.txt|new)"/);
    }
    expect(readFileSync(join(project.root, 'a.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(join(project.root, 'new'))).toBe(false);
  });

  it('cat --raw of a directory named with its slash is EISDIR, of a missing name ENOENT', () => {
    const dir = ctxfs(project, ['cat', '--raw', 'd/']);
    expect(dir.status).toBe(1);
    expect(dir.stderr).toMatch(/^ctxfs: EISDIR/);
    const missing = ctxfs(project, ['cat', '--raw', 'missing/']);
    expect(missing.status).toBe(3);
    expect(missing.stdout).toBe('');
  });
});
