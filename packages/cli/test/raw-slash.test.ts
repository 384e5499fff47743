/** `ctxfs cat --raw a.txt/` refuses the name as `ctxfs cat a.txt/` does (helper 66's campaign). */
import { describe, expect, it } from 'vitest';
import { ctxfs, useProject } from './support/cli.ts';

describe('cat --raw of a file named with a trailing slash', { timeout: 60_000 }, () => {
  const project = useProject({ 'a.txt': 'a\n' });

  it('is refused as ENOTDIR (exit 1) and writes no byte, as cat without --raw is', () => {
    const r = ctxfs(project, ['cat', '--raw', 'a.txt/']);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/ENOTDIR/);
  });
});
