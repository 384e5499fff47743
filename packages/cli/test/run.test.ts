import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ctxfs, useProject } from './support/cli.ts';

// `ctxfs run`: run_command from a shell, on the host workspace of the test project (bubblewrap confines it).
describe('ctxfs run', () => {
  const project = useProject();
  const run = (args: readonly string[]) => ctxfs(project, args);

  it('runs a command in the workspace directory and prints its exit status and output', () => {
    const r = run(['run', '--cwd', 'src', '--', 'ls', '&&', 'echo', 'done']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('$ ls && echo done\nexit 0 (bubblewrap)\n1\tmain.ts\n2\tmath.ts\n3\tdone\n');
    const json = run(['--json', 'run', 'exit 4']);
    expect(JSON.parse(json.stdout)).toMatchObject({ command: 'exit 4', exit_code: 4, runner: 'bubblewrap', limits: [] });
  });

  it('is refused by the policy with EDENIED, recorded in the audit', () => {
    project.write('.ctxfs/config.toml', '[commands]\ndeny = ["rm *"]\n');
    try {
      const r = run(['run', 'rm -rf src']);
      expect(r.stderr).toMatch(/EDENIED: .*deny "rm \*"/);
      expect(r.status).not.toBe(0);
      const audit = run(['--json', 'audit', '--op', 'command', '--limit', '1']);
      expect(audit.stdout).toContain('rm -rf src');
    } finally {
      rmSync(join(project.root, '.ctxfs', 'config.toml'));
    }
  });
});
