/**
 * Registers the POSIX scenario rows of some operations as tests against the
 * backend under test; the same rows are checked against node:fs by
 * `conformance/test/posix-oracle.test.ts`.
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import type { SuiteContext } from '../context.ts';
import { runOnFilesystem } from './filesystem-runner.ts';
import { expectedOutcome, fixtureOf, type PosixOpName, scenariosFor } from './scenarios.ts';

/** One test per scenario row of `ops`; rows marked ctxfs-only say so in their name. */
export function describePosixScenarios(ctx: SuiteContext, ...ops: PosixOpName[]): void {
  const rows = scenariosFor(...ops).map((s) => [s.ctxfsOnly === undefined ? s.name : `${s.name} (ctxfs rule)`, s] as const);
  describe('POSIX scenarios (checked against node:fs)', () => {
    it.each(rows)('%s', async (_name, s) => {
      const fs = await ctx.make(fixtureOf(s.tree));
      expect(await runOnFilesystem(fs, s.run)).toEqual(expectedOutcome(s));
    });
  });
}
