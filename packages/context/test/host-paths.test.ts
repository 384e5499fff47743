/**
 * What of an error a model may see: host paths and server addresses are
 * named as outside the workspace; workspace paths, globs and ratios stay.
 */
import { FsError } from '@ctxfs/core';
import { expect, test } from 'vitest';
import { withoutHostPaths } from '../src/index.ts';

test('a PostgreSQL URL with its socket directory, an engine address and a host path are hidden; the original is the cause', () => {
  const err = new FsError({
    code: 'EUNAVAILABLE',
    op: 'query',
    path: 'postgres://ctxfs@/ctxfs?host=/var/run/secret-socket&schema=w',
    reason:
      'the PostgreSQL server at postgres://ctxfs@/ctxfs?host=/var/run/secret-socket cannot be reached: connect ENOENT /var/run/secret-socket/.s.PGSQL.5432',
    hint: 'or try tcp://10.0.0.5:2376 with certificates in /home/me/.docker',
  });
  const safe = withoutHostPaths(err);
  for (const text of [safe.message, safe.reason, safe.hint, safe.path]) {
    expect(text).not.toMatch(/secret-socket|10\.0\.0\.5|\/home\/me/);
  }
  expect(safe.reason).toBe('the PostgreSQL server at (an address outside the workspace) cannot be reached: connect ENOENT (a path outside the workspace)');
  expect(safe.path).toBe('(an address outside the workspace)');
  expect(safe.cause).toBe(err);
});

test('workspace paths, globs and ratios are left as they are', () => {
  const err = new FsError({
    code: 'ENOENT',
    op: 'read',
    path: 'src/a.ts',
    reason: 'no match for src/**/*.ts in docs/api (3/4 tried)',
    hint: 'list src/',
  });
  expect(withoutHostPaths(err)).toBe(err);
});
