/**
 * Where a test's context keeps its state: in memory (SQLite), or — in the
 * vitest project `postgres` (`CTXFS_TEST_STATE=postgres`) — in a schema of its
 * own on the test server, so the context layer's tests run over both stores.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';

/** The `store` option for a test's `createContext`. */
export function testState(): string {
  if (process.env.CTXFS_TEST_STATE !== 'postgres') return ':memory:';
  const url = process.env.CTXFS_TEST_POSTGRES_URL;
  if (url === undefined) {
    throw new Error('the postgres project needs CTXFS_TEST_POSTGRES_URL: bash .ci/system-deps.sh starts the server, ./run-tests passes its URL');
  }
  return `${url}${url.includes('?') ? '&' : '?'}schema=${TEST_SCHEMA_PREFIX}${randomBytes(6).toString('hex')}`;
}

/**
 * Whether this run keeps its state in PostgreSQL. A new schema costs 0.1–0.2 s
 * (its tables made), so property tests that make a context per run take a
 * tenth of their runs there.
 */
export const ON_POSTGRES = process.env.CTXFS_TEST_STATE === 'postgres';

/** Schemas the tests make start with this; the project's global teardown drops them. */
export const TEST_SCHEMA_PREFIX = 'ctxfs_test_';
