/**
 * Counts a person reads: one of a thing is said in the singular ("1 file",
 * "1 record verifies"), as every count the tools give a model is. The scan,
 * prune, audit verify and doctor summaries said "1 files", "1 records
 * verify" and "1 entries".
 *
 * @module
 */

import { describe, expect, it } from 'vitest';
import { ctxfs, useProject } from './support/cli.ts';

describe('counts of one', () => {
  const project = useProject({ 'only.txt': 'x' });
  const run = (args: readonly string[]) => ctxfs(project, args);

  it("scan, doctor, audit verify and a file's metadata say one of a thing in the singular", () => {
    expect(run(['scan']).stdout).toBe('1 file: 1 added, 0 changed, 0 removed, 0 unchanged (1 hashed)\n');
    expect(run(['doctor']).stdout).toMatch(/ backend +\S+: 1 entry at the top\n/);
    // The scan is not audited; this read is the one record of the store's chain and the trail's one line.
    expect(run(['cat', 'only.txt']).status).toBe(0);
    const verified = run(['audit', 'verify']).stdout;
    expect(verified).toMatch(/^ok: store chain: 1 record verifies \(head #1 [0-9a-f]{12}\); /);
    expect(run(['call', 'get_file_metadata', '{"path":"only.txt"}']).stdout).toMatch(/^only\.txt: file; 1 byte; /);
  });

  it('prune says one version in the singular', () => {
    // Three versions of a file: keeping two removes the first.
    for (const text of ['y', 'z']) expect(run(['call', 'write_file', JSON.stringify({ path: 'only.txt', content: text })]).status).toBe(0);
    const pruned = run(['prune', '--max-versions', '2']);
    expect(pruned.stdout).toMatch(/^history: 1 version removed, [\d,]+ stored contents? \([\d,]+ bytes?\) freed\n/);
  });
});
