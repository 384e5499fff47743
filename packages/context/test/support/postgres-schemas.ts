/**
 * Global setup of the vitest project `postgres`: drops the schemas the
 * tests made on the test server (see test-state.ts) — before the run, those
 * of runs that are over (a run stopped midway leaves some); after it, this
 * run's too. Never those of another run still going: two runs on one
 * server (a CI clone beside a developer's) each keep theirs.
 *
 * @module
 */

import pg from 'pg';
import { processExists } from '../../src/edits/journal.ts';
import { runOfSchema, TEST_SCHEMA_PREFIX, testRun } from './test-state.ts';

async function dropTestSchemas(ours: boolean): Promise<void> {
  const url = process.env.CTXFS_TEST_POSTGRES_URL;
  if (url === undefined) return;
  const run = Number(testRun());
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1)', [TEST_SCHEMA_PREFIX]);
    for (const { name } of rows) {
      const pid = runOfSchema(name);
      // A name without a run is an older layout's: no run still going makes one.
      const over = pid === undefined || (pid === run ? ours : !processExists(pid));
      if (over) await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(name)} CASCADE`);
    }
  } finally {
    await client.end();
  }
}

export async function setup(): Promise<void> {
  await dropTestSchemas(false);
}

export async function teardown(): Promise<void> {
  await dropTestSchemas(true);
}
