/**
 * `readlink` of a link inside the workspace answers where it leads, as bash
 * does, so `readlink -f` (just-bash's, which follows `readlink` answers)
 * ends on the file. It answered `EINVAL` for every link, which says "not a
 * link": `readlink -f lic` printed `/lic`, the link itself, where bash
 * prints the file (found by session 34's campaign against /bin/bash on a
 * copied package tree). Each answer is checked against the real /bin/bash
 * on the same directory.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerFilesystem } from '@ctxfs/container';
import { describe, expect, it } from 'vitest';
import { sh, testDocker } from '../../container/test/docker-fixture.ts';
import { CtxfsBash, CtxfsBashFs } from '../src/index.ts';
import { useBackends } from './backends.ts';

const { BACKENDS, open } = useBackends('rl');

/** A host workspace with links inside (to a file, a directory, up a level, its own directory, nowhere) and one out of it. */
async function withLinks() {
  const o = await BACKENDS.host({ LICENSE: 'license\n', 'lib/a.js': 'a\n' });
  const dir = o.dir as string;
  symlinkSync('LICENSE', join(dir, 'lic'));
  symlinkSync('lib', join(dir, 'libl'));
  symlinkSync('../LICENSE', join(dir, 'lib/up'));
  symlinkSync('nowhere.txt', join(dir, 'dangling'));
  mkdirSync(join(dir, 'd'));
  symlinkSync('../lib/a.js', join(dir, 'd/a'));
  symlinkSync('.', join(dir, 'd/here'));
  symlinkSync('/etc', join(dir, 'out'));
  return { ...o, dir };
}

/** What /bin/bash prints for `cmd` in `dir`, with `dir` written as the workspace root `/`. */
function realBash(dir: string, cmd: string): { stdout: string; exitCode: number } {
  const r = spawnSync('/bin/bash', ['-c', cmd], { cwd: dir, encoding: 'utf8' });
  return { stdout: r.stdout.replaceAll(`${realpathSync(dir)}/`, '/'), exitCode: r.status ?? -1 };
}

describe('readlink of a link inside the workspace', () => {
  it('answers where the link leads, from its own directory, as bash does; readlink -f ends on the file', async () => {
    const o = await withLinks();
    const bash = new CtxfsBash(o.ctx);
    for (const cmd of [
      'readlink lic',
      'readlink lib/up',
      'readlink libl/up',
      'readlink d/a',
      'readlink libl',
      'readlink dangling',
      'readlink d/here',
      'readlink -f lic',
      'readlink -f lib/up',
      'readlink -f d/a',
      'readlink -f libl',
      'readlink LICENSE; echo $?',
      'readlink lib; echo $?',
      'readlink nope; echo $?',
    ]) {
      const r = await bash.exec(cmd);
      expect({ stdout: r.stdout, exitCode: r.exitCode }, cmd).toEqual(realBash(o.dir, cmd));
    }
  });

  it('a link out of the workspace is still refused, its target never shown', async () => {
    const o = await withLinks();
    const r = await new CtxfsBash(o.ctx).exec('readlink out; echo $?; readlink -f out');
    expect(r.stdout).toBe('1\n/out\n');
    expect(`${r.stdout}${r.stderr}`).not.toContain('/etc');
    await expect(new CtxfsBashFs(o.ctx).readlink('/out')).rejects.toMatchObject({ code: 'EACCES' });
  });
});

describe('readlink of a link inside a container workspace', () => {
  it("answers as the container's own readlink does", async () => {
    // The container backend needs the Docker engine (in CI it must be there).
    const o = await open('container')({ LICENSE: 'license\n', 'lib/a.js': 'a\n' });
    const fs = o.fs as ContainerFilesystem;
    const container = testDocker().getContainer(fs.containerRef);
    const made = await sh(container, `cd ${fs.workdir} && ln -s LICENSE lic && ln -s lib libl && ln -s ../LICENSE lib/up && ln -s nowhere.txt dangling`);
    expect(made.code).toBe(0);
    const bash = new CtxfsBash(o.ctx);
    for (const cmd of [
      'readlink lic',
      'readlink lib/up',
      'readlink libl/up',
      'readlink dangling',
      'readlink -f lic',
      'readlink -f lib/up',
      'readlink LICENSE; echo $?',
    ]) {
      const r = await bash.exec(cmd);
      const busybox = await sh(container, `cd ${fs.workdir} && ${cmd}`);
      expect({ stdout: r.stdout }, cmd).toEqual({ stdout: busybox.stdout.replaceAll(`${fs.workdir}/`, '/') });
    }
  }, 60_000);
});
