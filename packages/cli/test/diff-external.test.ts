import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, useProject } from './support/cli.ts';

// `ctxfs diff <path>` is documented as what changed outside ctxfs (the newest recorded version to the disk). A file
// read, then edited by someone, answered 'no recorded change; the file is as ctxfs first saw it' while its history
// showed the edit as #2 external; and once anything had looked at the file, the edit was recorded and the diff
// compared it with itself: 'no difference'.
describe('ctxfs diff after someone edits a file on disk', () => {
  const project = useProject();

  it('shows the edit, before and after the history records it', () => {
    expect(ctxfs(project, ['cat', 'src/math.ts']).status).toBe(0);
    appendFileSync(join(project.root, 'src/math.ts'), 'export const timeout = 30;\n');
    for (const when of ['first', 'again']) {
      const r = ctxfs(project, ['diff', 'src/math.ts']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout, when).toContain('+export const timeout = 30;');
      const data = ctxfs(project, ['diff', 'src/math.ts', '--json']).json<{ lines_added: number; to: string }>();
      expect(data.lines_added, when).toBe(1);
    }
    const history = ctxfs(project, ['history', 'src/math.ts']).stdout;
    expect(history).toMatch(/#2 external by external/);
  });

  it('says there is no change for a file nobody changed', () => {
    const r = ctxfs(project, ['diff', 'README.md']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^README\.md: no (recorded change|difference)/);
    expect(r.stdout).not.toContain('@@');
  });
});
