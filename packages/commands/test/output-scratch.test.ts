/**
 * Where kept command outputs go: beside a state file, and for a state in
 * memory or in PostgreSQL (a URL, no directory of its own) in the process's
 * memory — never a path made from the URL, relative to the current
 * directory, nor a temporary directory that a process ended by a signal
 * would leave behind.
 */

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { HELD_OUTPUT_CHARS, KEPT_OUTPUTS, keepOutput, readOutputLines } from '../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ctxfs-scratch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kept command outputs', () => {
  test('beside a state file', () => {
    const state = join(dir, '.p.ctxfs', 'state.db');
    const id = keepOutput(state, 'a\nb\nc\n');
    expect(existsSync(join(dir, '.p.ctxfs', 'command-output'))).toBe(true);
    expect(readOutputLines(state, id, 2, 3).lines).toEqual(['b', 'c']);
  });

  test('for a PostgreSQL state, in memory, not under the current directory', () => {
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

  test('for a state in memory, in memory: nothing is written to the temporary directory', () => {
    const scratch = () => readdirSync(tmpdir()).filter((f) => f.startsWith('ctxfs-command-output-'));
    const before = new Set(scratch());
    const id = keepOutput(':memory:', 'one\ntwo\nthree\n');
    expect(readOutputLines(':memory:', id, 2, 9)).toEqual({ lines: ['two', 'three'], start: 2, end: 3, total: 3 });
    expect(scratch().filter((f) => !before.has(f))).toEqual([]);
  });

  test('held outputs: the newest 50, and the oldest let go past the character bound; the newest is kept whatever its size', () => {
    const ids = Array.from({ length: KEPT_OUTPUTS + 1 }, (_, i) => keepOutput(':memory:', `output ${i}\n`));
    expect(() => readOutputLines(':memory:', ids[0] as string, 1, 1)).toThrow(/ENOENT: no kept output has this id \(only the newest 50 are kept/);
    expect(readOutputLines(':memory:', ids[1] as string, 1, 1).lines).toEqual(['output 1']);
    expect(readOutputLines(':memory:', ids.at(-1) as string, 1, 1).lines).toEqual([`output ${KEPT_OUTPUTS}`]);
    const huge = keepOutput(':memory:', `${'x'.repeat(HELD_OUTPUT_CHARS)}\n`);
    expect(readOutputLines(':memory:', huge, 1, 1).lines[0]).toHaveLength(HELD_OUTPUT_CHARS);
    // Over the bound with the huge one, every earlier output went; the next one pushes the huge one out in turn.
    expect(() => readOutputLines(':memory:', ids.at(-1) as string, 1, 1)).toThrow(/ENOENT/);
    const small = keepOutput(':memory:', 'small\n');
    expect(() => readOutputLines(':memory:', huge, 1, 1)).toThrow(/ENOENT/);
    expect(readOutputLines(':memory:', small, 1, 1).lines).toEqual(['small']);
  });
});
