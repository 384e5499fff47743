/**
 * Where kept command outputs go: beside a state file, and for a state in
 * memory or in PostgreSQL (a URL, no directory of its own) in a directory of
 * the process — never a path made from the URL, relative to the current directory.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { keepOutput, readOutputLines } from '../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ctxfs-scratch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kept command outputs', () => {
  test('beside a state file', () => {
    const state = join(dir, '.p.ctxfs', 'state.db');
    const id = keepOutput(state, 'a\nb\nc\n');
    expect(existsSync(join(dir, '.p.ctxfs', 'command-output'))).toBe(true);
    expect(readOutputLines(state, id, 2, 3).lines).toEqual(['b', 'c']);
  });

  test('for a PostgreSQL state, in the process directory, not under the current one', () => {
    const url = 'postgres://ctxfs@/ctxfs?host=/var/tmp/ctxfs-pg/socket';
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const id = keepOutput(url, 'x\ny\n');
      expect(readOutputLines(url, id, 1, 2).lines).toEqual(['x', 'y']);
      expect(existsSync(join(dir, 'postgres:'))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });
});
