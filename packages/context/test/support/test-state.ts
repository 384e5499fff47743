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
  return `${url}${url.includes('?') ? '&' : '?'}schema=${testSchemaName()}`;
}

/**
 * Whether this run keeps its state in PostgreSQL. A new schema costs 0.1–0.2 s
 * (its tables made), so property tests that make a context per run take a
 * tenth of their runs there.
 */
export const ON_POSTGRES = process.env.CTXFS_TEST_STATE === 'postgres';

/** Schemas the tests make start with this; the project's global teardown drops them. */
export const TEST_SCHEMA_PREFIX = 'ctxfs_test_';

/**
 * The vitest run a test belongs to: the main process's pid, set in
 * vitest.config.ts and inherited by the workers.
 */
export function testRun(): string {
  return process.env.CTXFS_TEST_RUN ?? String(process.pid);
}

/**
 * A new schema's name, `ctxfs_test_<run>_<label><random>`: the run's pid in
 * it lets a clean-up drop only the schemas of runs that are over, never
 * those of another run on the same server.
 */
export function testSchemaName(label = ''): string {
  return `${TEST_SCHEMA_PREFIX}${testRun()}_${label}${randomBytes(6).toString('hex')}`;
}

/** The pid of the run that made schema `name`, if it names one. */
export function runOfSchema(name: string): number | undefined {
  const m = /^ctxfs_test_(\d+)_/.exec(name);
  return m === null ? undefined : Number(m[1]);
}
