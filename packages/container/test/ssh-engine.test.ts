/**
 * The engine over SSH (`ssh://user@host:port`), against the sshd that
 * .ci/system-deps.sh runs on 127.0.0.1:22220 for an account in the docker
 * group (the local dockerd, reached by `docker system dial-stdio` on the
 * host, as the docker CLI does). Keys and known_hosts are the ones it made in
 * /var/lib/ctxfs-ssh. File operations work end to end; an unknown or changed
 * host key, a refused key, a stopped server and a host without docker are
 * clear FsErrors. In CI the suite fails when the sshd is missing.
 */

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { FsError } from '@ctxfs/core';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem, closeEngine, connectEngine, type EngineOptions, resolveEngine } from '../src/index.ts';
import { checkHostKey, knownHostsName } from '../src/known-hosts.ts';
import { errorOf, removeTestContainers, TEST_IMAGE, TEST_LABELS } from './docker-fixture.ts';

const SSH_DIR = process.env.CTXFS_SSH_DIR ?? '/var/lib/ctxfs-ssh';
const SSH_PORT = Number(process.env.CTXFS_SSH_PORT ?? '22220');
const SSH_ENGINE = `ssh://ctxfs-ssh@127.0.0.1:${SSH_PORT}`;
const KNOWN_HOSTS = join(SSH_DIR, 'known_hosts');
const key = (name: string) => join(SSH_DIR, name);
/** Explicit options: one key, the known_hosts made with the server's key. */
const withKey = (privateKey: string | Buffer, extra: NonNullable<EngineOptions['ssh']> = {}): EngineOptions => ({
  host: SSH_ENGINE,
  ssh: { privateKey, knownHosts: KNOWN_HOSTS, ...extra },
});

/** An FsError's whole text, to check no private key leaked into it. */
const textOf = (err: FsError) => `${err.message}\n${err.hint ?? ''}`;

describe('ssh:// addresses and known_hosts, as ssh reads them', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ctxfs-ssh-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('DOCKER_HOST=ssh://: user, port 22 by default, SSH_AUTH_SOCK as the agent, ~/.ssh/known_hosts from HOME', () => {
    const a = resolveEngine({ env: { DOCKER_HOST: 'ssh://deploy@10.1.2.3', SSH_AUTH_SOCK: '/tmp/agent.sock', HOME: dir } });
    expect(a).toMatchObject({ kind: 'ssh', host: '10.1.2.3', port: 22, username: 'deploy', agent: '/tmp/agent.sock', identities: [] });
    expect(a.kind === 'ssh' && a.knownHosts).toEqual([join(dir, '.ssh', 'known_hosts'), '/etc/ssh/ssh_known_hosts']);
    // TLS variables do not apply to ssh://.
    expect(resolveEngine({ env: { DOCKER_HOST: 'ssh://u@[::1]:2222', DOCKER_TLS_VERIFY: '1', HOME: dir } })).toMatchObject({
      kind: 'ssh',
      host: '::1',
      port: 2222,
    });
    // An explicit key is the only one offered unless an agent is named too.
    const k = resolveEngine({ host: 'ssh://u@h', ssh: { privateKey: key('client/id_ed25519') }, env: { SSH_AUTH_SOCK: '/tmp/a' } });
    expect(k.kind === 'ssh' && k.agent).toBeUndefined();
    expect(k.kind === 'ssh' && k.identities.map((i) => i.source)).toEqual([`the key file ${key('client/id_ed25519')}`]);
    expect(k.kind === 'ssh' && k.identities[0]?.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    // A resolved address can be logged: the key itself shows at no depth.
    expect(inspect(k, { depth: 10, showHidden: true }) + JSON.stringify(k)).not.toMatch(/PRIVATE KEY|BEGIN/);
    expect(resolveEngine({ host: 'u@box', protocol: 'ssh', port: 2200, env: {} })).toMatchObject({ kind: 'ssh', host: 'box', port: 2200, username: 'u' });
  });

  it('an unreadable key, a wrong passphrase or a missing known_hosts file is EINVAL at open, without the key', async () => {
    const missing = await errorOf((async () => resolveEngine({ host: 'ssh://u@h', ssh: { privateKey: '/nonexistent/key' } }))());
    expect(missing.code).toBe('EINVAL');
    expect(missing.message).toContain('the key file /nonexistent/key cannot be read');
    const encrypted = join(dir, 'encrypted');
    copyFileSync(key('client/id_ed25519'), encrypted);
    execFileSync('ssh-keygen', ['-q', '-p', '-P', '', '-N', 'right horse', '-f', encrypted]);
    const wrong = await errorOf((async () => resolveEngine({ host: 'ssh://u@h', ssh: { privateKey: encrypted, passphrase: 'wrong' } }))());
    expect(wrong.code).toBe('EINVAL');
    expect(wrong.hint).toMatch(/passphrase/);
    const text = readFileSync(key('client/id_ed25519'), 'utf8');
    const inline = await errorOf((async () => resolveEngine({ host: 'ssh://u@h', ssh: { privateKey: text.replace(/\n[A-Za-z0-9+/=]+\n/, '\nAAAA\n') } }))());
    expect(inline.message).toContain('the privateKey option is not a usable SSH private key');
    expect(textOf(inline)).not.toContain('BEGIN');
    const noFile = await errorOf((async () => resolveEngine({ host: 'ssh://u@h', ssh: { knownHosts: join(dir, 'nope') } }))());
    expect(noFile.code).toBe('EINVAL');
    expect(noFile.message).toContain('does not exist');
  });

  it('known_hosts: [host]:port, hashed entries, wildcards and negation, other keys, @revoked', () => {
    const good = Buffer.from('ssh-ed25519-good-key');
    const other = Buffer.from('ssh-ed25519-other-key');
    const file = join(dir, 'known_hosts');
    const b64 = (b: Buffer) => b.toString('base64');
    writeFileSync(
      file,
      [
        '# comment',
        `[127.0.0.1]:2222 ssh-ed25519 ${b64(good)}`,
        `build-*.example,!build-bad.example ssh-ed25519 ${b64(good)}`,
        `changed.example ssh-ed25519 ${b64(other)}`,
        `@revoked * ssh-ed25519 ${b64(other)}`,
        `@cert-authority *.example ssh-ed25519 ${b64(good)}`,
      ].join('\n'),
    );
    expect(knownHostsName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
    expect(knownHostsName('::1', 22)).toBe('::1');
    expect(checkHostKey([file], '[127.0.0.1]:2222', good).verdict).toBe('known');
    // The same host on port 22 is another name.
    expect(checkHostKey([file], '127.0.0.1', good).verdict).toBe('unknown');
    expect(checkHostKey([file], 'BUILD-7.example', good).verdict).toBe('known');
    expect(checkHostKey([file], 'build-bad.example', good).verdict).toBe('unknown');
    expect(checkHostKey([file], 'changed.example', good)).toMatchObject({ verdict: 'mismatch', where: `${file}:4`, knownTypes: ['ssh-ed25519'] });
    expect(checkHostKey([file], 'changed.example', other)).toMatchObject({ verdict: 'revoked', where: `${file}:5` });
    expect(checkHostKey([join(dir, 'absent'), file], '[127.0.0.1]:2222', good).verdict).toBe('known');
    // Hashed by ssh-keygen -H, as HashKnownHosts writes them.
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file], { stdio: 'ignore' });
    expect(readFileSync(file, 'utf8')).toMatch(/^\|1\|/m);
    expect(checkHostKey([file], '[127.0.0.1]:2222', good).verdict).toBe('known');
    expect(checkHostKey([file], '[127.0.0.1]:2223', good).verdict).toBe('unknown');
  });
});

/** Whether the test sshd answers and its account reaches an engine with the test image; in CI its absence fails the run. */
async function sshEngineAvailable(): Promise<boolean> {
  let docker: Docker | undefined;
  try {
    docker = connectEngine(withKey(key('client/id_ed25519')));
    await docker.ping();
    await docker.getImage(TEST_IMAGE).inspect();
    return true;
  } catch (err) {
    const why = `SSH engine ${SSH_ENGINE} (keys in ${SSH_DIR}) or image ${TEST_IMAGE} unavailable: ${(err as Error).message}`;
    if (process.env.CI) throw new Error(`${why}. The SSH engine suite must run in CI (see .ci/system-deps.sh).`);
    console.warn(`\n!! SKIPPING the SSH engine tests: ${why}\n!! Run bash .ci/system-deps.sh to start the test sshd.\n`);
    return false;
  } finally {
    if (docker) closeEngine(docker);
  }
}

const available = await sshEngineAvailable();

describe.runIf(available)('a Docker engine over SSH', () => {
  const opened: ContainerFilesystem[] = [];
  let dir: string;
  let agent: ChildProcess | undefined;
  let agentSocket: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxfs-ssh-'));
    // A real ssh-agent holding the client key, as SSH_AUTH_SOCK names one for the docker CLI.
    agentSocket = join(dir, 'agent.sock');
    agent = spawn('ssh-agent', ['-D', '-a', agentSocket], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !existsSync(agentSocket); i++) await new Promise((r) => setTimeout(r, 20));
    execFileSync('ssh-add', ['-q', key('client/id_ed25519')], { env: { ...process.env, SSH_AUTH_SOCK: agentSocket }, stdio: 'ignore' });
  });
  afterAll(async () => {
    for (const fs of opened) await fs.close().catch(() => {});
    const docker = connectEngine(withKey(key('client/id_ed25519')));
    await removeTestContainers(docker);
    closeEngine(docker);
    agent?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(engine: EngineOptions, extra: Partial<Parameters<typeof ContainerFilesystem.open>[0]> = {}) {
    const fs = await ContainerFilesystem.open({ image: TEST_IMAGE, labels: TEST_LABELS, engine, ...extra });
    opened.push(fs);
    return fs;
  }

  it('DOCKER_HOST=ssh:// with the key in ssh-agent: file operations work end to end', { timeout: 60_000 }, async () => {
    // known_hosts hashed, as HashKnownHosts=yes leaves it.
    const hashed = join(dir, 'known_hosts.hashed');
    copyFileSync(KNOWN_HOSTS, hashed);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', hashed], { stdio: 'ignore' });
    const fs = await open({ env: { DOCKER_HOST: SSH_ENGINE, SSH_AUTH_SOCK: agentSocket, HOME: dir }, ssh: { knownHosts: hashed } });
    expect(fs.docker.modem).toMatchObject({ protocol: 'http' });
    await fs.write('src/a.ts', 'export const needle = 1;\n', { createParents: true });
    await fs.write('src/b.ts', 'const other = 2;\n');
    expect(new TextDecoder().decode(await fs.readBytes('src/a.ts'))).toBe('export const needle = 1;\n');
    expect((await fs.stat('src/b.ts')).size).toBe(17);
    expect((await fs.list('src')).map((e) => e.name)).toEqual(['a.ts', 'b.ts']);
    await fs.rename('src/b.ts', 'src/c.ts');
    expect((await fs.list('src')).map((e) => e.name)).toEqual(['a.ts', 'c.ts']);
    await fs.delete('src/c.ts');
    expect(await fs.exists('src/c.ts')).toBe(false);
    // A few MB each way: exec stdin and stdout through dial-stdio, read back as a stream.
    const big = Buffer.alloc(4 << 20);
    for (let i = 0; i < big.length; i += 4096) big[i] = (i >>> 12) & 0xff;
    await fs.writeBytes('big.bin', big);
    const reader = await fs.openRead('big.bin', { chunkSize: 1 << 20 });
    const chunks: Uint8Array[] = [];
    for await (const c of reader) chunks.push(c);
    await reader.close();
    expect(Buffer.concat(chunks).equals(big)).toBe(true);
    expect(Buffer.from(await fs.readBytes('big.bin')).equals(big)).toBe(true);
    // Snapshot and restore go through the archive endpoints (a streamed response and a streamed upload).
    const snap = await fs.snapshot();
    await fs.delete('big.bin');
    await fs.write('src/a.ts', 'changed\n');
    await fs.restore(snap);
    expect(await fs.exists('big.bin')).toBe(true);
    expect(new TextDecoder().decode(await fs.readBytes('src/a.ts'))).toBe('export const needle = 1;\n');
    const matches = [];
    for await (const m of fs.grep('needle')) matches.push(`${m.path}:${m.line}`);
    expect(matches).toEqual(['src/a.ts:1']);
  });

  it('explicit options with an ecdsa key, attaching to a running container; close ends the SSH connection', { timeout: 60_000 }, async () => {
    const first = await open(withKey(key('client/id_ed25519')));
    await first.write('hello.txt', 'over ssh');
    const fs = await ContainerFilesystem.open({ container: first.containerRef, workdir: '/work', engine: withKey(key('client/id_ecdsa')) });
    expect(new TextDecoder().decode(await fs.readBytes('hello.txt'))).toBe('over ssh');
    await fs.close();
    await expect(fs.docker.ping()).rejects.toThrow(/was closed/);
  });

  it('the default identity file and known_hosts under HOME, no agent: as the docker CLI with a plain ~/.ssh', async () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    copyFileSync(key('client/id_ed25519'), join(home, '.ssh', 'id_ed25519'));
    chmodSync(join(home, '.ssh', 'id_ed25519'), 0o600);
    copyFileSync(KNOWN_HOSTS, join(home, '.ssh', 'known_hosts'));
    const docker = connectEngine({ env: { DOCKER_HOST: SSH_ENGINE, HOME: home } });
    try {
      expect(String(await docker.ping())).toBe('OK');
    } finally {
      closeEngine(docker);
    }
  });

  it('an encrypted key opens with its passphrase (after an unreachable agent); more requests at once than sshd allows channels per connection', async () => {
    const encrypted = join(dir, 'encrypted');
    copyFileSync(key('client/id_ed25519'), encrypted);
    execFileSync('ssh-keygen', ['-q', '-p', '-P', '', '-N', 'right horse', '-f', encrypted]);
    // An agent socket that does not exist is passed over, as ssh does, and the key is tried next.
    const docker = connectEngine(withKey(encrypted, { passphrase: 'right horse', agent: join(dir, 'no-agent.sock') }));
    try {
      // sshd's MaxSessions is 10: 24 concurrent requests need a second and third SSH connection.
      const versions = await Promise.all(Array.from({ length: 24 }, () => docker.version()));
      expect(new Set(versions.map((v) => v.Version)).size).toBe(1);
    } finally {
      closeEngine(docker);
    }
  });

  it('a key the server does not accept is EACCES naming the engine and the key tried, never the key itself', async () => {
    const err = await errorOf(open(withKey(key('rogue/id_ed25519'))));
    expect(err.code).toBe('EACCES');
    expect(err.op).toBe('open');
    expect(err.message).toContain(`the container engine at ${SSH_ENGINE} (over SSH) refused the SSH login of user 'ctxfs-ssh'`);
    expect(err.message).toContain(`the key file ${key('rogue/id_ed25519')} (SHA256:`);
    expect(err.hint).toMatch(/authorized_keys/);
    const inline = await errorOf(open(withKey(readFileSync(key('rogue/id_ed25519'), 'utf8'))));
    expect(inline.code).toBe('EACCES');
    expect(inline.message).toContain('the privateKey option (SHA256:');
    expect(textOf(inline)).not.toMatch(/PRIVATE KEY|BEGIN/);
  });

  it('a host key not in known_hosts is EACCES with its fingerprint and how to add it; a changed one is EACCES too', async () => {
    const printed = execFileSync('ssh-keygen', ['-l', '-f', key('host/ssh_host_ed25519_key.pub')], { encoding: 'utf8' }).split(' ')[1] ?? '';
    expect(printed).toMatch(/^SHA256:/);
    const empty = join(dir, 'known_hosts.empty');
    writeFileSync(empty, '');
    const unknown = await errorOf(open(withKey(key('client/id_ed25519'), { knownHosts: empty })));
    expect(unknown.code).toBe('EACCES');
    expect(unknown.message).toContain(
      `the container engine at ${SSH_ENGINE} (over SSH) was not trusted: its SSH host key (ssh-ed25519 ${printed}) is not in known_hosts`,
    );
    expect(unknown.hint).toContain(`ssh-keyscan -p ${SSH_PORT} 127.0.0.1`);
    expect(unknown.hint).toContain('ssh.knownHosts');
    // Another key on file for [127.0.0.1]:port: refused as a possible interception.
    const changed = join(dir, 'known_hosts.changed');
    writeFileSync(changed, `[127.0.0.1]:${SSH_PORT} ${readFileSync(key('rogue/id_ed25519.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
    const mismatch = await errorOf(open(withKey(key('client/id_ed25519'), { knownHosts: changed })));
    expect(mismatch.code).toBe('EACCES');
    expect(mismatch.message).toContain(`differs from the one known_hosts holds for '[127.0.0.1]:${SSH_PORT}' (${changed}:1, ssh-ed25519)`);
    expect(mismatch.hint).toContain(`ssh-keygen -R '[127.0.0.1]:${SSH_PORT}'`);
  });

  it('a host whose account has no docker command is EUNSUPPORTED saying so', async () => {
    const err = await errorOf(open(withKey(key('nodocker/id_ed25519'))));
    expect(err.code).toBe('EUNSUPPORTED');
    expect(err.message).toContain(`the container engine at ${SSH_ENGINE} (over SSH) has no docker command`);
    expect(err.message).toMatch(/status 127 .*docker: not found/);
    expect(err.hint).toMatch(/install the docker CLI on the host/);
  });

  it('a stopped SSH server is EUNAVAILABLE saying the engine does not answer, for attach and for create', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const engine = { host: `ssh://ctxfs-ssh@127.0.0.1:${port}`, ssh: { privateKey: key('client/id_ed25519'), knownHosts: KNOWN_HOSTS } };
    const attach = await errorOf(ContainerFilesystem.open({ container: 'sandbox', engine }));
    expect(attach.code).toBe('EUNAVAILABLE');
    expect(attach.message).toContain(`the container engine at ssh://ctxfs-ssh@127.0.0.1:${port} (over SSH) does not answer`);
    expect(attach.hint).toMatch(/start the container \(or the container engine\) again/);
    const create = await errorOf(ContainerFilesystem.open({ image: TEST_IMAGE, engine }));
    expect(create.code).toBe('EUNAVAILABLE');
    expect(create.message).toContain('does not answer');
  });
});
