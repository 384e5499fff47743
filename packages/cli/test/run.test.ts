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
    expect(json.status).toBe(4);
  });

  it("exits with the command's own status, and 124 when its time limit stopped it, so a script does not go on after a failure", () => {
    // It exited 0 whatever the command did: `ctxfs run -- make test && deploy` deployed after failing tests.
    const failed = run(['run', 'echo', 'out;', 'exit', '3']);
    expect(failed.status).toBe(3);
    expect(failed.stdout).toContain('exit 3 (bubblewrap)\n1\tout\n');
    expect(run(['--json', 'run', 'exit 7']).status).toBe(7);
    expect(run(['run', 'kill -9 $$']).status).toBe(137);
    const stopped = run(['run', '--timeout', '1', 'sleep 5']);
    expect(stopped.stdout).toContain('stopped');
    expect(stopped.status).toBe(124);
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
