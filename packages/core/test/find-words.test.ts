import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPruneWords } from '../src/find-words.ts';

function hasFind(): boolean {
  try {
    execFileSync('find', ['.', '-maxdepth', '0'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('findPruneWords', () => {
  it('nothing to prune is no words', () => {
    expect(findPruneWords([])).toEqual([]);
    expect(findPruneWords(['', '.', '..', 'a/b', 'nul\0'])).toEqual([]);
  });

  it('one name, then an alternative per further name, as raw words', () => {
    expect(findPruneWords(['node_modules'])).toEqual(['(', '-name', 'node_modules', ')', '-prune', '-o']);
    expect(findPruneWords(new Set(['a', '-n', 'b c']))).toEqual(['(', '-name', 'a', '-o', '-name', '-n', '-o', '-name', 'b c', ')', '-prune', '-o']);
  });

  it('escapes every pattern character, so names match literally', () => {
    expect(findPruneWords(['x*y', 'q?', '[ab]', 'back\\slash', "it's"])).toEqual([
      '(',
      '-name',
      'x\\*y',
      '-o',
      '-name',
      'q\\?',
      '-o',
      '-name',
      '\\[ab\\]',
      '-o',
      '-name',
      'back\\\\slash',
      '-o',
      '-name',
      "it's",
      ')',
      '-prune',
      '-o',
    ]);
  });

  // find itself decides what the words mean: each excluded name, and only it,
  // goes with everything below it.
  it.runIf(hasFind())('find prunes exactly the named entries, literally', () => {
    const root = mkdtempSync(join(tmpdir(), 'ctxfs-find-words-'));
    try {
      const names = ['x*y', 'xzy', '[ab]', 'a', 'b', 'q?', 'qq', 'back\\slash', 'backXslash', '-n', 'keep'];
      for (const name of names) {
        mkdirSync(join(root, name));
        writeFileSync(join(root, name, 'inner'), name);
      }
      const exclude = ['x*y', '[ab]', 'q?', 'back\\slash', '-n', 'inner-of-none', ''];
      const out = execFileSync('find', ['.', '-mindepth', '1', ...findPruneWords(exclude), '-print0'], { cwd: root, encoding: 'utf8' });
      const found = out
        .split('\0')
        .filter((p) => p !== '')
        .map((p) => p.slice(2))
        .sort();
      const kept = names.filter((n) => !exclude.includes(n));
      expect(found).toEqual(kept.flatMap((n) => [n, `${n}/inner`]).sort());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
