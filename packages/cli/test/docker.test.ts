import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable, removeTestContainers, seedWorkspace, sh, startTestContainer, TEST_IMAGE } from '../../container/test/docker-fixture.ts';
import { ctxfs, pasted, useProject } from './support/cli.ts';

// The container backends through the CLI, on the real engine: in CI a missing engine fails (dockerAvailable throws), locally it skips loudly.
const docker = await dockerAvailable();

describe.runIf(docker)('ctxfs on a Docker container', () => {
  const project = useProject({});
  let container: Docker.Container;
  let name: string;
  beforeAll(async () => {
    container = await startTestContainer();
    name = (await container.inspect()).Name.replace(/^\//, '');
    await seedWorkspace(container, '/work', 'app', { 'src/util.ts': 'export const limit = 10;\n', 'README.md': '# In a container\n' });
  }, 120_000);
  afterAll(() => removeTestContainers());

  it('reads, edits and keeps history inside the container by name (docker:<container>)', { timeout: 120_000 }, async () => {
    const on = ['--backend', `docker:${name}`, '--workdir', '/work/app'];
    const raw = ctxfs(project, [...on, 'cat', '--raw', 'src/util.ts']);
    expect(raw.status, raw.stderr).toBe(0);
    expect(raw.stdout).toBe('export const limit = 10;\n');
    expect(
      ctxfs(project, [...on, 'ls', '--json'])
        .json<{ items: Array<{ name: string }> }>()
        .items.map((i) => i.name),
    ).toEqual(expect.arrayContaining(['README.md', 'src/util.ts']));
    const edit = ctxfs(project, [...on, 'replace', 'src/util.ts', 'limit = 10', 'limit = 20']);
    expect(edit.status, edit.stderr).toBe(0);
    expect((await sh(container, 'cat /work/app/src/util.ts')).stdout).toBe('export const limit = 20;\n');
    // The state of a container's workspace is the user's, outside the container: the next command sees the change.
    const history = ctxfs(project, [...on, 'history', 'src/util.ts', '--json']).json<{ versions: Array<{ op: string; author: string }> }>();
    expect(history.versions[0]).toMatchObject({ op: 'replace', author: 'cli' });
    expect(ctxfs(project, [...on, 'undo', 'src/util.ts']).status).toBe(0);
    expect((await sh(container, 'cat /work/app/src/util.ts')).stdout).toBe('export const limit = 10;\n');
    const doctor = ctxfs(project, [...on, 'doctor', '--json']).json<{ ok: boolean; checks: Array<{ name: string; ok: boolean }> }>();
    expect(doctor.ok).toBe(true);
    expect(doctor.checks.find((c) => c.name === 'docker')?.ok).toBe(true);
  });

  it("a container's snapshot outlives the command that took it: the next restores it", { timeout: 120_000 }, async () => {
    const on = ['--backend', `docker:${name}`, '--workdir', '/work/app'];
    const created = ctxfs(project, [...on, 'snapshot', 'create', 'baseline', '--json']);
    expect(created.status, created.stderr).toBe(0);
    const { id } = created.json<{ id: string }>();
    await sh(container, 'echo scribbled > /work/app/README.md');
    const listed = ctxfs(project, [...on, 'snapshot', 'list', '--json']).json<{ snapshots: Array<{ id: string; tag?: string }> }>();
    expect(listed.snapshots).toEqual([expect.objectContaining({ id, tag: 'baseline' })]);
    const restored = ctxfs(project, [...on, 'snapshot', 'restore', 'baseline']);
    expect(restored.status, restored.stderr).toBe(0);
    expect((await sh(container, 'cat /work/app/README.md')).stdout).toBe('# In a container\n');
    expect(ctxfs(project, [...on, 'snapshot', 'drop', id]).status).toBe(0);
    expect(ctxfs(project, [...on, 'snapshot', 'list', '--json']).json<{ snapshots: unknown[] }>().snapshots).toEqual([]);
  });

  // A hint repeats the command line typed, --workdir with its absolute path inside the container; the refusal's guard,
  // which keeps host paths from a model, took that path for one: `ctxfs --backend docker:x --workdir a path outside the
  // workspace scan`, which no shell runs.
  it('a hint keeps --workdir as typed, and runs when pasted', { timeout: 120_000 }, () => {
    const on = ['--backend', `docker:${name}`, '--workdir', '/work/app'];
    const missing = ctxfs(project, [...on, 'cat', 'nowhere.ts']);
    expect(missing.status).toBe(3);
    expect(missing.stderr).not.toContain('outside the workspace');
    const ls = /ctxfs --backend \S+ --workdir \/work\/app ls/.exec(missing.stderr)?.[0];
    const glob = /ctxfs --backend \S+ --workdir \/work\/app call glob '[^']*'/.exec(missing.stderr)?.[0];
    expect(ls, missing.stderr).toBeDefined();
    expect(glob, missing.stderr).toBeDefined();
    const listed = pasted(project, ls ?? '');
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('README.md');
    const found = pasted(project, glob ?? '');
    expect(found.status, found.stderr).toBe(0);
    expect(found.stdout).toMatch(/no (files|match)/);
    const json = ctxfs(project, [...on, '--json', 'symbol', 'nothing', 'src/util.ts']);
    expect(json.status).toBe(3);
    const { hint } = json.json<{ error: { hint: string } }>().error;
    expect(hint).toContain(`ctxfs --backend docker:${name} --workdir /work/app outline src/util.ts`);
    expect(pasted(project, `ctxfs --backend docker:${name} --workdir /work/app outline src/util.ts`).status).toBe(0);
  });

  it('works on a new container from an image, removed after (docker-image:<image>)', { timeout: 120_000 }, async () => {
    const before = (await new Docker().listContainers({ all: true })).length;
    const r = ctxfs(project, ['--backend', `docker-image:${TEST_IMAGE}`, 'ls', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ view: 'files' });
    expect((await new Docker().listContainers({ all: true })).length).toBe(before);
  });
});
