/**
 * A redirection whose target cannot be opened fails that command and the
 * script goes on, as in bash: each script also runs under the real
 * /bin/bash in a directory holding the same files, and stdout, the exit
 * status and the reason on stderr must agree.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bash } from 'just-bash';
import { afterAll, describe, expect, it } from 'vitest';
import { CtxfsBash, CtxfsBashFs, redirectionGroups } from '../src/index.ts';
import { useBackends } from './backends.ts';

const FILES = { 'b.txt': 'keep\n', 'd/x.txt': 'x\n' };
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `script` under the real bash, in a fresh directory holding FILES. */
function realBash(script: string): { stdout: string; stderr: string; exitCode: number; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-real-bash-'));
  dirs.push(dir);
  for (const [p, t] of Object.entries(FILES)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), t);
  }
  // stdin not a socket, and --norc: bash -c reads ~/.bashrc when it thinks rshd started it.
  const r = spawnSync('/bin/bash', ['--norc', '--noprofile', '-c', script], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
  });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.status ?? -1, dir };
}

/** What each stderr line says, after the name: `No such file or directory` of `bash: line 1: nodir/a.txt: No such file or directory`. */
const reasons = (stderr: string): string[] =>
  stderr
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.slice(l.lastIndexOf(': ') + 2));

const AS_BASH: ReadonlyArray<readonly [string, string]> = [
  ['echo one; echo x > nodir/a.txt; echo two', 'No such file or directory'],
  ['set -e; echo one; echo x > nodir/a.txt; echo two', 'No such file or directory'],
  ['echo one; echo x >> nodir/a.txt; echo two $?', 'No such file or directory'],
  ['echo one; ls nope 2> nodir/err; echo two $?', 'No such file or directory'],
  ['echo one; echo x &> nodir/a.txt; echo two $?', 'No such file or directory'],
  ['echo one; echo x > b.txt/c; echo two $?', 'Not a directory'],
  ['echo one; echo x > nodir/a.txt || echo failed $?; echo two', 'No such file or directory'],
  ['echo one; echo x > nodir/a.txt && echo ok; echo two $?', 'No such file or directory'],
  ['echo one; { echo in; } > nodir/a; echo two $?', 'No such file or directory'],
  ['f() { echo in; }; echo one; f > nodir/a; echo two $?', 'No such file or directory'],
  ['for i in 1 2; do echo $i; echo $i > nodir/$i; done; echo end $?', 'No such file or directory'],
  ['echo one; x=$(echo sub > nodir/q; echo after); echo "two $x"', 'No such file or directory'],
  ['echo one; eval "echo x > nodir/e"; echo two $?', 'No such file or directory'],
];

const { BACKENDS, open: openOn } = useBackends('redir');

describe.each(Object.keys(BACKENDS))('a redirection that cannot be opened, over ctxfs %s', (name) => {
  const open = openOn(name);

  it.each(AS_BASH)('%s: as bash, the command fails and the script goes on', async (script, reason) => {
    const real = realBash(script);
    const { fs, ctx } = await open(FILES);
    const r = await new CtxfsBash(ctx).exec(script);
    expect(r.stdout).toBe(real.stdout);
    expect(r.exitCode).toBe(real.exitCode);
    expect(reasons(r.stderr)).toEqual(reasons(real.stderr));
    expect(reasons(r.stderr)).toContain(reason);
    // Nothing made: not the file, not its directory.
    expect(await fs.exists('nodir')).toBe(false);
    expect(existsSync(join(real.dir, 'nodir'))).toBe(false);
    expect(text(await fs.readBytes('b.txt'))).toBe('keep\n');
  });

  it('a command whose redirection fails does not run', async () => {
    const script = 'echo one; mkdir made > nodir/a; echo two $?';
    const real = realBash(script);
    const { fs, ctx } = await open(FILES);
    const r = await new CtxfsBash(ctx).exec(script);
    expect(r.stdout).toBe(real.stdout);
    expect(r.stdout).toBe('one\ntwo 1\n');
    expect(existsSync(join(real.dir, 'made'))).toBe(false);
    expect(await fs.exists('made')).toBe(false);
  });

  it('a write the policy denies fails that command; the script goes on, and the file and its history are as they were', async () => {
    const { fs, ctx } = await open({ 'locked/a.txt': 'keep\n', 'out.txt': 'old\n' }, { readOnly: ['locked/'] });
    const bash = new CtxfsBash(ctx);
    const r = await bash.exec('echo one; echo x > locked/a.txt; echo two $?; echo done > out.txt');
    expect(r.stdout).toBe('one\ntwo 1\n');
    expect(r.stderr).toMatch(/^bash: \/locked\/a\.txt: Permission denied \(policy: locked\/a\.txt is read-only/);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.exitCode).toBe(0);
    expect(text(await fs.readBytes('locked/a.txt'))).toBe('keep\n');
    expect(text(await fs.readBytes('out.txt'))).toBe('done\n');
    expect(r.changes.map((c) => c.path)).toEqual(['out.txt']);
    expect((await ctx.history('locked/a.txt')).map((v) => v.op)).toEqual(['initial']);

    // Under set -e the script ends there, with status 1, keeping what it printed.
    const strict = await bash.exec('set -e; echo one; echo x >> locked/a.txt; echo two');
    expect(strict).toMatchObject({ stdout: 'one\n', exitCode: 1 });
    expect(strict.stderr).toContain('Permission denied');

    // A group's output already sent to its own file stays there.
    const grouped = await bash.exec('{ echo a; echo x > locked/a.txt; echo b; } > out.txt; echo two');
    expect(grouped.stdout).toBe('two\n');
    expect(text(await fs.readBytes('out.txt'))).toBe('a\nb\n');
  });

  it('a name ending in "/" fails the command and the script goes on, as in bash', async () => {
    const script = 'echo one; echo x > b.txt/; echo x >> b.txt/; echo x > new/; echo x > d/; echo two $?';
    const real = realBash(script);
    const { fs, ctx } = await open(FILES);
    const r = await new CtxfsBash(ctx).exec(script);
    expect(r.stdout).toBe(real.stdout);
    expect(r.exitCode).toBe(real.exitCode);
    expect(reasons(r.stderr)).toEqual(reasons(real.stderr));
    expect(reasons(r.stderr)).toEqual(Array(4).fill('Is a directory'));
    expect(text(await fs.readBytes('b.txt'))).toBe('keep\n');
    expect(await fs.exists('new')).toBe(false);
  });

  it('under set -eu an unset variable in a redirected command still ends the script, as in bash', async () => {
    const script = 'set -eu; echo one; echo "$UNSET" > d/o.txt; echo two';
    const real = realBash(script);
    const { ctx } = await open(FILES);
    const r = await new CtxfsBash(ctx).exec(script);
    expect(r.stdout).toBe(real.stdout);
    expect(r.stdout).toBe('one\n');
    expect(r.exitCode).toBe(real.exitCode);
    expect(r.stderr).toContain('UNSET: unbound variable');
  });

  it('redirections that open fine are unchanged: files, /dev/null, 2>&1, here-documents, exec', async () => {
    const { fs, ctx } = await open(FILES);
    const script = [
      'x=1; echo "$x" > d/a.txt; cd d; echo more >> a.txt; cd ..',
      'ls nope 2>/dev/null || echo "no nope"',
      'ls nope > d/both.txt 2>&1; echo "both $?"',
      'cat > d/doc.txt <<EOF\nhello $((1 + 1))\nEOF',
      'exec 3> d/fd3.txt; echo three >&3; exec 3>&-',
      'cat d/a.txt d/doc.txt d/fd3.txt',
    ].join('\n');
    const real = realBash(script);
    const r = await new CtxfsBash(ctx).exec(script);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('no nope\nboth 2\n1\nmore\nhello 2\nthree\n');
    expect(r.stdout).toBe(real.stdout);
    expect(text(await fs.readBytes('d/both.txt'))).toMatch(/nope/);
  });
});

describe('the transform under a plain Bash over CtxfsBashFs', () => {
  it('with redirectionGroups registered, a denied redirection fails its command and the script goes on', async () => {
    const o = await BACKENDS.memory({ 'locked/a.txt': 'keep\n' }, { readOnly: ['locked/'] });
    const bash = new Bash({ fs: new CtxfsBashFs(o.ctx), cwd: '/' });
    bash.registerTransformPlugin(redirectionGroups);
    const r = await bash.exec('echo one; echo x > locked/a.txt; echo two $?');
    expect(r.stdout).toBe('one\ntwo 1\n');
    expect(r.stderr).toContain('bash: /locked/a.txt: Permission denied');
    expect(text(await o.fs.readBytes('locked/a.txt'))).toBe('keep\n');
  });
});
