import { isAbsolute, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, pasted, useProject } from './support/cli.ts';

// `--root /abs/dir` (and a state file named by an absolute path) is repeated in a hint relative to the directory the
// command ran in. Written as typed, it was taken for a host path by the refusal's guard, which keeps host paths from a
// model: the hint came out as `ctxfs --root a path outside the workspace call glob …`, no command at all.
describe('a hint after an absolute --root', () => {
  const project = useProject({ 'docs/guide.md': '# Guide\n', 'src/a.ts': 'export const a = 1;\n' });

  it('names the root as a path from here in a refusal hint, which runs pasted from the same directory', () => {
    const state = join(project.base, 'state-abs', 'state.db');
    expect(isAbsolute(project.root)).toBe(true);
    const r = ctxfs(project, ['--json', '--root', project.root, '--state', state, 'cat', 'guide.md'], { cwd: project.base });
    expect(r.status).toBe(3);
    const { hint } = r.json<{ error: { hint: string } }>().error;
    expect(hint).not.toContain('outside the workspace');
    const call = /ctxfs --root proj --state state-abs\/state\.db call glob '[^']*'/.exec(hint)?.[0];
    expect(call, hint).toBeDefined();
    const found = pasted(project, call ?? '', { cwd: project.base });
    expect(found.status, found.stderr).toBe(0);
    expect(found.stdout).toContain('docs/guide.md');

    // From another directory the same root is another relative path, and the hint still finds it.
    const deeper = join(project.root, 'src');
    const text = ctxfs(project, ['--root', project.root, 'cat', 'nope.ts'], { cwd: deeper });
    expect(text.status).toBe(3);
    expect(text.stderr).not.toContain('outside the workspace');
    const scan = /ctxfs --root \.\. scan/.exec(text.stderr)?.[0];
    expect(scan, text.stderr).toBeDefined();
    const scanned = pasted(project, scan ?? '', { cwd: deeper });
    expect(scanned.status, scanned.stderr).toBe(0);
    expect(scanned.stdout).toMatch(/^2 files: 2 added/);
  });
});
