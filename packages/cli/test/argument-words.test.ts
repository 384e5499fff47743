import { describe, expect, it } from 'vitest';
import { ctxfs, pasted, useProject } from './support/cli.ts';

// A command's argument that the tool's schema refuses is named as the command takes it (`--context 99`, `<pattern>`),
// and the way out is the command's help, not the tool's signature (`Call it as grep(pattern, path?, …)`), which
// names arguments no command has. `ctxfs call` keeps the tool's own words: there the arguments are the tool's.
describe('a refused argument in the words of the command that took it', () => {
  const project = useProject();
  const run = (args: readonly string[]) => ctxfs(project, args);

  it.each([
    [['grep', ''], "<pattern> '':", 'ctxfs grep --help'],
    [['grep', 'x', '--context', '99'], '--context 99:', 'ctxfs grep --help'],
    [['grep', 'x', '--limit', '0'], '--limit 0:', 'ctxfs grep --help'],
    [['cat', ''], "<path> '':", 'ctxfs cat --help'],
    [['symbol', ''], "<name> '':", 'ctxfs symbol --help'],
    [['replace', 'src/math.ts', '', 'x'], "<old> '':", 'ctxfs replace --help'],
    [['history', 'src/math.ts', '--limit', '0'], '--limit 0:', 'ctxfs history --help'],
    [['ls', '--depth', '-1'], '--depth -1:', 'ctxfs ls --help'],
  ])('ctxfs %j', (args, named, help) => {
    const r = run(args);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^ctxfs: EINVAL: /);
    expect(r.stderr).toContain(named);
    expect(r.stderr).not.toMatch(/Call it as|_lines|_text|_tokens/);
    expect(r.stderr).toContain(`${help} shows its arguments, options and examples`);
    const followed = pasted(project, help);
    expect(followed.status, help).toBe(0);
    expect(followed.stdout).toMatch(/^Usage: ctxfs /);

    const json = run(['--json', ...args]);
    expect(json.status).toBe(2);
    const { error } = json.json<{ error: { code: string; message: string; hint: string } }>();
    expect(error.code).toBe('EINVAL');
    expect(error.message).toContain(named);
    expect(error.message).not.toContain('EINVAL');
    expect(error.hint).toBe(`${help} shows its arguments, options and examples`);
  });

  it('the help named repeats the global options typed, so it is the same command', () => {
    const r = ctxfs(project, ['--root', project.root, '--profile', 'small', 'grep', 'x', '--context', '99'], { cwd: project.base });
    expect(r.status).toBe(2);
    // The root typed as an absolute path is written from the directory the command ran in (call-text.ts).
    const help = 'ctxfs --root proj --profile small grep --help';
    expect(r.stderr).toContain(help);
    expect(pasted(project, help, { cwd: project.base }).status).toBe(0);
  });

  it('ctxfs call keeps the tool’s own words', () => {
    const r = run(['call', 'grep', '{"pattern":"","context_lines":99}']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Call it as grep(pattern');
  });
});
