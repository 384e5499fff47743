/**
 * Global setup of the vitest project `postgres`: drops the schemas the
 * context layer's tests made on the test server (see test-state.ts), before
 * the run (a run stopped midway leaves some) and after it.
 *
 * @module
 */

import pg from 'pg';
import { TEST_SCHEMA_PREFIX } from './test-state.ts';

async function dropTestSchemas(): Promise<void> {
  const url = process.env.CTXFS_TEST_POSTGRES_URL;
  if (url === undefined) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1)', [TEST_SCHEMA_PREFIX]);
    for (const { name } of rows) await client.query(`DROP SCHEMA ${client.escapeIdentifier(name)} CASCADE`);
  } finally {
    await client.end();
  }
}

export async function setup(): Promise<void> {
  await dropTestSchemas();
}

export async function teardown(): Promise<void> {
  await dropTestSchemas();
}
