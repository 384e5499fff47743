import { describe, expect, it } from 'vitest';
import { ctxfs, pasted, useProject } from './support/cli.ts';

// A usage error with --json says what happened in `message` and what to do in `hint`, each once, as every other
// failure does: commander's suggestion ("Did you mean cat?") and the command's help were folded into the message,
// or lost.
describe('a usage error with --json', () => {
  const project = useProject();
  type Failure = { error: { code: string; message: string; hint?: string } };

  it.each([
    [['cta', 'x'], "unknown command 'cta'", ['Did you mean cat?', 'ctxfs --help lists the commands and options']],
    [['rollback', 'src/math.ts'], "missing required argument 'to'", ['ctxfs rollback --help shows its arguments, options and examples']],
    [['grep', 'x', '--bogus'], "unknown option '--bogus'", ['ctxfs grep --help shows its arguments, options and examples']],
    [['snapshot', 'restore'], "missing required argument 'id'", ['ctxfs snapshot restore --help shows its arguments, options and examples']],
  ])('ctxfs --json %j', (args, message, hints) => {
    const r = ctxfs(project, ['--json', ...args]);
    expect(r.status).toBe(2);
    const { error } = r.json<Failure>();
    expect(error.code).toBe('EINVAL');
    expect(error.message).toBe(message);
    for (const hint of hints) expect(error.hint).toContain(hint);
    // The help it names is a command that works.
    const help = /ctxfs [a-z ]*--help/.exec(error.hint ?? '')?.[0] ?? '';
    expect(pasted(project, help).status, help).toBe(0);
    // Without --json, the same words on stderr.
    const text = ctxfs(project, args);
    expect(text.status).toBe(2);
    for (const hint of hints) expect(text.stderr).toContain(hint);
  });
});
