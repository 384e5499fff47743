/**
 * Campaign on hints that repeat the global options typed on the command
 * line (call-text.ts `commandPrefix`): each `next` a command prints, pasted
 * into a shell from the same directory, runs where the command ran — on
 * the same backend, state and profile — and it repeats only what was typed
 * (never a variable's or config.toml's value, a password or --request-id).
 */

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStateStore } from '@ctxfs/context';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable, removeTestContainers, seedWorkspace, startTestContainer, TEST_ENGINE } from '../../container/test/docker-fixture.ts';
import { testSchemaName } from '../../context/test/support/test-state.ts';
import { ctxfs, type Project, pasted, useProject } from './support/cli.ts';

const LONG = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join('\n');

/** The `next` of a `--json` answer. */
function nextOf(project: Project, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = ctxfs(project, ['--json', ...args], options);
  expect(r.status, r.stderr).toBe(0);
  const next = (JSON.parse(r.stdout) as { next?: string }).next;
  expect(next, r.stdout).toBeDefined();
  return next ?? '';
}

/** Pastes `hint` and expects it to serve long.txt's first lines. */
function follows(project: Project, hint: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): void {
  const r = pasted(project, hint, options);
  expect(r.status, `${hint}: ${r.stderr}`).toBe(0);
  expect(r.stdout, hint).toMatch(/^<file path="long\.txt"[^\n]*\n1\tline 1\n/);
}

describe('a hint repeats the typed global options, and runs where its command ran', { timeout: 60_000 }, () => {
  const project = useProject({ 'long.txt': `${LONG}\n` });

  it('global options typed after the command name are repeated before it', () => {
    const next = nextOf(project, ['cat', 'long.txt', '-p', 'small', '--agent', 'llm:after']);
    expect(next).toMatch(/^ctxfs --profile small --agent llm:after cat long\.txt --lines 1:\d+$/);
    follows(project, next);
  });

  it('--backend memory, and values with spaces, quotes and a leading dash, quoted so the shell hands them back unchanged', () => {
    const next = nextOf(project, ['--backend', 'memory', '-p', 'small', '--agent', 'it\'s -x "q"', '--session=-s 1', 'cat', 'long.txt']);
    expect(next).toMatch(/^ctxfs --backend memory --profile small --agent 'it'\\''s -x "q"' '--session=-s 1' cat long\.txt --lines 1:\d+$/);
    follows(project, next);
  });

  it('--request-id, --json and --no-color are not repeated (the next command with the same key would be taken for a retry)', () => {
    const next = nextOf(project, ['--request-id', 'campaign-1', '--no-color', '-p', 'small', 'cat', 'long.txt']);
    expect(next).not.toMatch(/request-id|--json|--no-color|campaign-1/);
    follows(project, next);
  });

  it('a relative --root and a relative --state are repeated as typed, and the pasted hint finds both from the same directory', () => {
    const cwd = join(project.base, 'elsewhere');
    mkdirSync(cwd, { recursive: true });
    const state = join('..', 'hint-state', 'state.db');
    const next = nextOf(project, ['-C', '../proj', '--state', state, '-p', 'small', 'cat', 'long.txt'], { cwd });
    expect(next).toMatch(/^ctxfs --root \.\.\/proj --profile small --state \.\.\/hint-state\/state\.db cat long\.txt --lines 1:\d+$/);
    follows(project, next, { cwd });
    // Both commands used that state: its history holds the two reads' session records.
    const audit = ctxfs(project, ['--json', '--root', '../proj', '--state', state, 'audit', '--path', 'long.txt'], { cwd });
    expect(audit.status, audit.stderr).toBe(0);
    expect((JSON.parse(audit.stdout) as { records: unknown[] }).records.length).toBeGreaterThanOrEqual(1);
  });

  it('--store, the former name of --state, is repeated as --state, and the hint runs on that state', () => {
    const state = join(project.base, 'store-state', 'state.db');
    const next = nextOf(project, ['--store', state, '-p', 'small', 'cat', 'long.txt']);
    expect(next.startsWith(`ctxfs --profile small --state ../store-state/state.db cat long.txt --lines 1:`), next).toBe(true);
    follows(project, next);
    const audit = ctxfs(project, ['--json', '--state', state, 'audit', '--path', 'long.txt']);
    expect(audit.status, audit.stderr).toBe(0);
    expect((JSON.parse(audit.stdout) as { records: unknown[] }).records.length).toBe(2);
  });

  it('values from variables and from the project config.toml [cli] table are not repeated; the pasted hint reads them again', () => {
    project.write('.ctxfs/config.toml', '[cli]\nprofile = "small"\nagent = "llm:config"\n');
    try {
      const env = { CTXFS_BACKEND: 'memory', CTXFS_SESSION: 'env-session' };
      const next = nextOf(project, ['cat', 'long.txt'], { env });
      expect(next).toMatch(/^ctxfs cat long\.txt --lines 1:\d+$/);
      follows(project, next, { env });
      // A typed option beside them is repeated alone.
      const typed = nextOf(project, ['--agent', 'llm:typed', 'cat', 'long.txt'], { env });
      expect(typed).toMatch(/^ctxfs --agent llm:typed cat long\.txt --lines 1:\d+$/);
      // --no-policy-files typed: the hint carries it, so it too reads no config (and with the large profile serves all).
      const bare = nextOf(project, ['--no-policy-files', '-p', 'small', 'cat', 'long.txt']);
      expect(bare).toMatch(/^ctxfs --profile small --no-policy-files cat long\.txt --lines 1:\d+$/);
      follows(project, bare);
    } finally {
      rmSync(join(project.root, '.ctxfs'), { recursive: true, force: true });
    }
  });

  it('a --state URL with a password that cannot be reached: the error names the URL without the password', () => {
    for (const json of [[], ['--json']]) {
      const r = ctxfs(project, [...json, '--state', 'postgres://app:s3cr3t@127.0.0.1:1/ctxfs?password=hunter2', 'cat', 'long.txt']);
      expect(r.status).toBe(5);
      expect(r.stdout + r.stderr).toContain('postgres://app@127.0.0.1:1/ctxfs');
      expect(r.stdout + r.stderr).not.toMatch(/s3cr3t|hunter2/);
    }
  });

  it('an error hint repeats the typed options too: a missing file names a glob on the same root', () => {
    const cwd = join(project.base, 'elsewhere2');
    mkdirSync(cwd, { recursive: true });
    const r = ctxfs(project, ['--json', '--root', '../proj', 'cat', 'docs/long.txt'], { cwd });
    expect(r.status).toBe(3);
    const hint = (JSON.parse(r.stdout) as { error: { hint?: string } }).error.hint ?? '';
    const call = /ctxfs --root \.\.\/proj call glob '[^']*'/.exec(hint)?.[0];
    expect(call, hint).toBeDefined();
    const followed = pasted(project, call ?? '', { cwd });
    expect(followed.status, followed.stderr).toBe(0);
    expect(followed.stdout).toContain('long.txt');
  });
});

const POSTGRES = process.env.CTXFS_TEST_POSTGRES_URL;
// In CI the PostgreSQL cases must run: a missing server fails the run, never a silent skip (./run-tests sets the URL).
if (POSTGRES === undefined && process.env.CI)
  throw new Error('CTXFS_TEST_POSTGRES_URL is not set: bash .ci/system-deps.sh starts PostgreSQL and ./run-tests passes its URL');

describe.runIf(POSTGRES !== undefined)('a hint of a command on a PostgreSQL state', { timeout: 60_000 }, () => {
  const project = useProject({ 'long.txt': `${LONG}\n` });
  const schema = testSchemaName('hints_');
  afterAll(async () => {
    // The store of the test's schema drops it (its own pool, then nothing of it is left).
    const sep = POSTGRES?.includes('?') ? '&' : '?';
    const store = await openStateStore(`${POSTGRES}${sep}schema=${schema}`);
    try {
      await store.run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await store.close();
    }
  });

  it('leaves the password out, in the URL and in its query, and still runs (the server needs none, or PGPASSWORD gives it)', () => {
    const sep = POSTGRES?.includes('?') ? '&' : '?';
    const withUser = (POSTGRES ?? '').replace(
      /^postgres(ql)?:\/\/([^@/]*)@/,
      (_m, ql: string | undefined, user: string) => `postgres${ql ?? ''}://${user.split(':')[0]}:s3cr%2Fet@`,
    );
    const state = `${withUser}${sep}schema=${schema}&password=hunter2`;
    const r = ctxfs(project, ['--json', '--state', state, '-p', 'small', 'cat', 'long.txt']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/s3cr|hunter2/);
    const next = (JSON.parse(r.stdout) as { next?: string }).next ?? '';
    expect(next).toContain(`schema=${schema}`);
    expect(next).not.toMatch(/s3cr|hunter2|password/);
    follows(project, next, { env: { PGPASSWORD: 'unused-by-a-trusting-server' } });
    follows(project, next);
    // The hint's command read from the same database: three reads of long.txt in its audit.
    const audit = ctxfs(project, ['--json', '--state', state, 'audit', '--path', 'long.txt']);
    expect(audit.status, audit.stderr).toBe(0);
    expect((JSON.parse(audit.stdout) as { records: unknown[] }).records.length).toBeGreaterThanOrEqual(3);
  });
});

const engineEnv = TEST_ENGINE.name === 'podman' ? { DOCKER_HOST: `unix://${TEST_ENGINE.socketPath}` } : {};

describe.runIf(await dockerAvailable())('a hint of a command on a container', { timeout: 60_000 }, () => {
  const project = useProject({});
  let container: Docker.Container;
  let name = '';
  beforeAll(async () => {
    container = await startTestContainer();
    name = (await container.inspect()).Name.replace(/^\//, '');
    await seedWorkspace(container, '/work', 'app', { 'long.txt': `${LONG}\n` });
  }, 120_000);
  afterAll(() => removeTestContainers());

  it('repeats -b docker:<name> and --workdir, and the pasted hint reads the container’s file', () => {
    const next = nextOf(project, ['-b', `docker:${name}`, '--workdir', '/work/app', '-p', 'small', 'cat', 'long.txt'], { env: engineEnv });
    expect(next).toMatch(new RegExp(`^ctxfs --backend docker:${name} --workdir /work/app --profile small cat long\\.txt --lines 1:\\d+$`));
    follows(project, next, { env: engineEnv });
    // Without the options, the hint would read the project directory, where no long.txt is.
    expect(pasted(project, next.replace(/--backend \S+ --workdir \S+ /, ''), { env: engineEnv }).status).toBe(3);
  });
});
