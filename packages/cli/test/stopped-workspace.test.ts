import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable, seedWorkspace, startTestContainer, TEST_ENGINE, testDocker } from '../../container/test/docker-fixture.ts';
import { ctxfs, useProject } from './support/cli.ts';

// The engine under test is the fixture's (CTXFS_TEST_ENGINE): the CLI reaches Podman through its Docker-compatible socket.
const available = await dockerAvailable();
const engineEnv = TEST_ENGINE.name === 'podman' ? { DOCKER_HOST: `unix://${TEST_ENGINE.socketPath}` } : {};

interface Failed {
  error: { code: string; message: string; hint?: string };
}
interface Doctor {
  ok: boolean;
  checks: Array<{ name: string; ok: boolean; required: boolean; detail: string }>;
}

describe.runIf(available)(`what ctxfs says of a stopped or paused container (${TEST_ENGINE.label})`, () => {
  const project = useProject({});
  let container: Docker.Container;
  let name = '';
  let on: string[];
  const run = (args: readonly string[]) => ctxfs(project, [...on, ...args], { env: engineEnv });
  /** The refusal of `args` (with --json): exit 5, EUNAVAILABLE, the container named, no engine's or backend's own words. */
  const refusal = (args: readonly string[]): Failed['error'] => {
    const r = run([...args, '--json']);
    expect(r.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(5);
    const { error } = r.json<Failed>();
    expect(error.code, args.join(' ')).toBe('EUNAVAILABLE');
    expect(error.message, args.join(' ')).toContain(`container '${name}'`);
    expect(error.message, args.join(' ')).not.toContain('EUNAVAILABLE');
    expect(error.message, args.join(' ')).not.toMatch(/readBytes|list_files/);
    return error;
  };

  beforeAll(async () => {
    container = await startTestContainer();
    name = (await container.inspect()).Name.replace(/^\//, '');
    on = ['--backend', `docker:${name}`, '--workdir', '/work/app'];
    await seedWorkspace(container, '/work', 'app', { 'a.txt': 'one\n', '.ctxfs/config.toml': '[policy]\nmode = "auto"\n' });
    const r = run(['ls']);
    expect(r.status, r.stderr).toBe(0);
    await container.stop({ t: 0 });
  }, 120_000);
  // By the name this file made, never by a pattern other files' containers could match.
  afterAll(async () => {
    if (name !== '') await testDocker().getContainer(name).remove({ force: true });
  });

  it('ls: exit 5 naming the stopped container and the engine command that starts it, not the policy file it failed on', { timeout: 60_000 }, () => {
    const error = refusal(['ls']);
    expect(error.message).toContain(`container '${name}' is not running`);
    expect(error.message).not.toContain('.ctxfs/config.toml');
    expect(error.hint).toContain(`${TEST_ENGINE.name} start ${name}`);
    // Without the container there is nothing to list, with the built-in policy or not.
    expect(error.hint).not.toContain('--no-policy-files');
    const plain = run(['ls']);
    expect(plain.status).toBe(5);
    expect(plain.stderr.trim().split('\n')).toEqual([`ctxfs: EUNAVAILABLE: ${error.message}`, error.hint]);
  });

  it('policy show and audit: exit 5, the policy inside the container cannot be read; start it, or --no-policy-files', { timeout: 60_000 }, () => {
    for (const args of [['policy', 'show'], ['audit']]) {
      const error = refusal(args);
      expect(error.message, args.join(' ')).toContain(`container '${name}' is not running`);
      expect(error.message, args.join(' ')).toContain("the workspace's policy (.ctxfs/config.toml) cannot be read");
      expect(error.hint, args.join(' ')).toContain(`${TEST_ENGINE.name} start ${name}`);
      expect(error.hint, args.join(' ')).toContain('--no-policy-files');
      // What the hint offers works: both need nothing else of the container.
      const bypass = run(['--no-policy-files', ...args]);
      expect(bypass.status, `${args.join(' ')}: ${bypass.stderr}`).toBe(0);
    }
  });

  it('doctor: the stopped container is one of its findings, with the way out, and the other checks are made', { timeout: 60_000 }, () => {
    for (const policy of [[], ['--no-policy-files']]) {
      const r = run([...policy, 'doctor', '--json']);
      expect(r.status, r.stderr).toBe(5);
      const report = r.json<Doctor>();
      expect(report.ok).toBe(false);
      expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['node', 'docker', 'ripgrep', 'backend']));
      const backend = report.checks.find((c) => c.name === 'backend');
      expect(backend?.ok).toBe(false);
      expect(backend?.detail).toContain(`container '${name}' is not running`);
      expect(backend?.detail).toContain(`${TEST_ENGINE.name} start ${name}`);
      expect(backend?.detail).not.toMatch(/EUNAVAILABLE|readBytes|list '/);
      // The engine check names the engine it reached, Podman's Docker-compatible service as Podman.
      expect(report.checks.find((c) => c.name === 'docker')?.detail).toMatch(new RegExp(`^${TEST_ENGINE.name === 'podman' ? 'Podman' : 'Docker'} engine `));
      expect(r.stderr).toBe('');
    }
  });

  it('paused: exit 5 saying so once, with the engine command that unpauses it', { timeout: 120_000 }, async () => {
    await container.start();
    await container.pause();
    try {
      const error = refusal(['ls']);
      expect(error.message).toContain(`container '${name}' is paused`);
      expect(error.hint).toContain(`${TEST_ENGINE.name} unpause ${name}`);
      const plain = run(['ls']);
      expect(plain.status).toBe(5);
      expect(plain.stderr.match(/EUNAVAILABLE/g)).toHaveLength(1);
    } finally {
      await container.unpause();
    }
    const r = run(['ls']);
    expect(r.status, r.stderr).toBe(0);
  });
});
