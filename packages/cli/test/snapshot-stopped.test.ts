import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable, removeTestContainers, seedWorkspace, startTestContainer, TEST_ENGINE } from '../../container/test/docker-fixture.ts';
import { ctxfs, useProject } from './support/cli.ts';

// The engine under test is the fixture's (CTXFS_TEST_ENGINE): the CLI reaches Podman through its Docker-compatible socket.
const available = await dockerAvailable();
const engineEnv = TEST_ENGINE.name === 'podman' ? { DOCKER_HOST: `unix://${TEST_ENGINE.socketPath}` } : {};

interface Listed {
  snapshots: Array<{ id: string; tag?: string }>;
}
interface Audited {
  records: Array<{ params?: { snapshot?: string } }>;
}
interface Failed {
  error: { code: string; message: string; hint?: string };
}

describe.runIf(available)(`ctxfs snapshot on a stopped container (${TEST_ENGINE.label})`, () => {
  const project = useProject({});
  let container: Docker.Container;
  let name: string;
  let on: string[];
  const run = (args: readonly string[]) => ctxfs(project, [...on, ...args], { env: engineEnv });
  const tags = () =>
    run(['snapshot', 'list', '--json'])
      .json<Listed>()
      .snapshots.map((s) => s.tag);

  beforeAll(async () => {
    container = await startTestContainer();
    name = (await container.inspect()).Name.replace(/^\//, '');
    on = ['--backend', `docker:${name}`, '--workdir', '/work/app'];
    await seedWorkspace(container, '/work', 'app', { 'a.txt': 'one\n', '.ctxfs/config.toml': '[policy]\nmode = "auto"\n' });
    for (const tag of ['kept', 'doomed', 'later']) {
      const r = run(['snapshot', 'create', tag]);
      expect(r.status, r.stderr).toBe(0);
    }
    await container.stop({ t: 0 });
  }, 120_000);
  afterAll(() => removeTestContainers());

  it('lists the snapshots it keeps outside the container', { timeout: 60_000 }, () => {
    const r = run(['snapshot', 'list', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json<Listed>().snapshots.map((s) => s.tag)).toEqual(['kept', 'doomed', 'later']);
  });

  it("refuses a drop while the workspace's policy cannot be read: exit 5, the container named, the fixes given, nothing dropped", { timeout: 60_000 }, () => {
    const r = run(['snapshot', 'drop', 'doomed', '--json']);
    expect(r.status, r.stdout).toBe(5);
    const { error } = r.json<Failed>();
    expect(error.code).toBe('EUNAVAILABLE');
    expect(error.message).toContain(`container '${name}' is not running`);
    expect(error.message).toContain("the workspace's policy (.ctxfs/config.toml) cannot be read");
    expect(error.hint).toContain(`${TEST_ENGINE.name} start ${name}`);
    expect(error.hint).toContain('--no-policy-files');
    // The command it names lists this container's snapshots: it repeats the options this one was given.
    expect(error.hint).toContain(`ctxfs --backend docker:${name} --workdir /work/app snapshot list works while it is stopped`);
    // A person reads it as two lines: what happened, then what to do; no stack, no engine's own words.
    const plain = run(['snapshot', 'drop', 'doomed']);
    expect(plain.status).toBe(5);
    expect(plain.stderr.trim().split('\n')).toEqual([`ctxfs: EUNAVAILABLE: ${error.message}`, error.hint]);
    expect(tags()).toEqual(['kept', 'doomed', 'later']);
  });

  it('drops with --no-policy-files, deciding by the built-in policy alone', { timeout: 60_000 }, () => {
    const r = run(['--no-policy-files', 'snapshot', 'drop', 'doomed', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ action: 'dropped' });
    expect(tags()).toEqual(['kept', 'later']);
    const audit = run(['--no-policy-files', 'audit', '--op', 'dropSnapshot', '--json']);
    expect(audit.status, audit.stderr).toBe(0);
    expect(audit.json<Audited>().records.map((rec) => rec.params?.snapshot)).toEqual(['doomed']);
  });

  it('a snapshot, a restore or a read needs the container running, --no-policy-files or not: it says to start it', { timeout: 60_000 }, () => {
    for (const args of [
      ['snapshot', 'create', 'new'],
      ['snapshot', 'restore', 'kept'],
      ['--no-policy-files', 'snapshot', 'create', 'new'],
      ['--no-policy-files', 'snapshot', 'restore', 'kept'],
      ['--no-policy-files', 'ls'],
    ]) {
      const r = run([...args, '--json']);
      expect(r.status, args.join(' ')).toBe(5);
      const { error } = r.json<Failed>();
      expect(error.code, args.join(' ')).toBe('EUNAVAILABLE');
      expect(error.message, args.join(' ')).toContain(`container '${name}' is not running`);
      expect(error.hint, args.join(' ')).toContain(`${TEST_ENGINE.name} start ${name}`);
      // The policy is not what stops them, so bypassing it is no advice (a command it names repeats the option when it was typed).
      expect(error.hint, args.join(' ')).not.toContain('pass --no-policy-files');
    }
    expect(tags()).toEqual(['kept', 'later']);
  });

  it('started again, a drop reads the policy and goes through, and both drops are in the audit', { timeout: 120_000 }, async () => {
    await container.start();
    const r = run(['snapshot', 'drop', 'later', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(tags()).toEqual(['kept']);
    const audit = run(['audit', '--op', 'dropSnapshot', '--json']);
    expect(audit.status, audit.stderr).toBe(0);
    expect(audit.json<Audited>().records.map((rec) => rec.params?.snapshot)).toEqual(['later', 'doomed']);
  });
});
