/**
 * The platform check of the POSIX scenario table: every row that claims to
 * mirror POSIX must produce exactly its expected outcome on real node:fs in a
 * temp directory, so the conformance suite encodes what the platform does.
 */

import { describe, expect, it } from 'vitest';
import { runOnNode } from '../src/posix/node-runner.ts';
import { expectedOutcome, SCENARIOS } from '../src/posix/scenarios.ts';

const mirrored = SCENARIOS.filter((s) => s.ctxfsOnly === undefined);
const deliberate = SCENARIOS.filter((s) => s.ctxfsOnly !== undefined);

describe('POSIX scenario table against node:fs', () => {
  it.each(mirrored.map((s) => [s.name, s] as const))('%s', async (_name, s) => {
    expect(await runOnNode(s.tree, s.run)).toEqual(expectedOutcome(s));
  });
});

describe('ctxfs-only rows: the platform really differs', () => {
  const documented = deliberate.filter((s) => s.platform !== undefined);
  it.each(documented.map((s) => [s.name, s] as const))('%s', async (_name, s) => {
    const platform = expectedOutcome({ ...s, expect: s.platform ?? s.expect });
    expect(platform).not.toEqual(expectedOutcome(s));
    expect(await runOnNode(s.tree, s.run)).toEqual(platform);
  });
});

describe('POSIX scenario table: shape', () => {
  it('has at least 120 scenarios with unique names', () => {
    expect(SCENARIOS.length).toBeGreaterThanOrEqual(120);
    expect(new Set(SCENARIOS.map((s) => s.name)).size).toBe(SCENARIOS.length);
  });

  it('keeps ctxfs-only deviations few and explained', () => {
    expect(deliberate.length).toBeLessThanOrEqual(Math.ceil(SCENARIOS.length / 10));
    for (const s of deliberate) expect(s.ctxfsOnly?.trim().length, s.name).toBeGreaterThan(10);
  });

  it.each(['delete', 'mkdir', 'rename', 'copy', 'stat', 'exists', 'list'] as const)('covers %s', (op) => {
    expect(mirrored.filter((s) => s.run.op === op).length).toBeGreaterThanOrEqual(5);
  });
});
