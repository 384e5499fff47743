/**
 * A state location that cannot hold the state store is refused with what is
 * wrong there and what to name instead: a directory (EISDIR: a file inside
 * it), a file where a directory of the path should be (ENOTDIR), a file that
 * is not a database (EINVAL), a directory that cannot be written (EACCES).
 * Each refusal carries the path, and the path its hint names opens. A
 * location whose directories do not exist yet is made.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FsError, isFsError } from '@ctxfs/core';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { SqliteDatabase } from '../src/state/sqlite-database.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ctxfs-state-location-'));
});
afterEach(() => {
  chmodSync(dir, 0o755);
  for (const sub of ['ro']) {
    try {
      chmodSync(join(dir, sub), 0o755);
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
});

function refusal(path: string): FsError {
  try {
    SqliteDatabase.open(path).close();
  } catch (err) {
    if (isFsError(err)) return err;
    throw err;
  }
  throw new Error(`${path} opened`);
}

/** The quoted path a hint names, e.g. `'/tmp/x/state.db'`. */
function named(hint: string | undefined): string {
  const m = /'([^']+)'/.exec(hint ?? '');
  if (m === null) throw new Error(`the hint names no path: ${hint}`);
  return m[1] as string;
}

describe('a state location that cannot hold the store', () => {
  test('a directory is EISDIR, and the file the hint names inside it opens', () => {
    const err = refusal(dir);
    expect(err.code).toBe('EISDIR');
    expect(err.path).toBe(dir);
    expect(err.reason).toContain('is a directory');
    expect(err.hint).not.toContain('writable');
    const suggested = named(err.hint);
    expect(suggested).toBe(join(dir, 'state.db'));
    SqliteDatabase.open(suggested).close();
  });

  test('a path below a file is ENOTDIR, naming the file; the path the hint names opens', () => {
    writeFileSync(join(dir, 'notes'), 'text\n');
    const err = refusal(join(dir, 'notes', 'sub', 'state.db'));
    expect(err.code).toBe('ENOTDIR');
    expect(err.reason).toContain(`'${join(dir, 'notes')}' is a file`);
    SqliteDatabase.open(named(err.hint)).close();
  });

  test('a file that is not a database is EINVAL, and it is left as it was', () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'these are notes, not a database, and long enough to be read as a header\n'.repeat(10));
    const err = refusal(file);
    expect(err.code).toBe('EINVAL');
    expect(err.reason).toContain('not a SQLite database');
    const suggested = named(err.hint);
    expect(suggested).not.toBe(file);
    SqliteDatabase.open(suggested).close();
  });

  test('directories that do not exist yet are made', () => {
    const path = join(dir, 'new', 'deeper', 'state.db');
    SqliteDatabase.open(path).close();
    SqliteDatabase.open(path).close();
  });

  test.skipIf(process.getuid?.() === 0)('a directory that cannot be written is EACCES, naming it', () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    const err = refusal(join(ro, 'state.db'));
    expect(err.code).toBe('EACCES');
    expect(err.reason).toContain(`'${ro}'`);
    expect(err.hint).toContain('writable');
    const below = refusal(join(ro, 'sub', 'state.db'));
    expect(below.code).toBe('EACCES');
    expect(below.reason).toContain(`'${ro}'`);
  });
});

describe('a state file this process cannot write', () => {
  test.skipIf(process.getuid?.() === 0)('is EACCES at open, naming the file, not a failed write later', () => {
    const file = join(dir, 'state.db');
    SqliteDatabase.open(file).close();
    chmodSync(file, 0o444);
    const err = refusal(file);
    expect(err.code).toBe('EACCES');
    expect(err.reason).toContain(`the state file '${file}'`);
  });
});
