/**
 * A remote engine over TCP with TLS and client certificates: a second dockerd
 * that .ci/system-deps.sh starts on 127.0.0.1 with certificates it made by
 * openssl (a CA, the server's, a client's, and an untrusted CA with a client
 * certificate of its own). The address is resolved as the docker CLI does
 * (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) or from explicit
 * options; refusals on either side and a stopped engine are clear FsErrors.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '@ctxfs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerFilesystem, connectEngine, defaultSocketPath, type EngineOptions, resolveEngine } from '../src/index.ts';
import { errorOf, removeTestContainers, TEST_IMAGE, TEST_LABELS } from './docker-fixture.ts';

const TLS_DIR = process.env.CTXFS_TLS_DIR ?? '/var/lib/ctxfs-tls';
const TLS_HOST = process.env.CTXFS_TLS_ENGINE ?? 'tcp://127.0.0.1:23760';
const certs = (dir: string) => join(TLS_DIR, dir);
/** Engine options with the CA of one directory and the client certificate of another. */
const mixed = (caDir: string, clientDir: string): EngineOptions => ({
  host: TLS_HOST,
  ca: readFileSync(join(certs(caDir), 'ca.pem')),
  cert: readFileSync(join(certs(clientDir), 'cert.pem')),
  key: readFileSync(join(certs(clientDir), 'key.pem')),
});
/** The docker CLI's environment for the TLS engine. */
const TLS_ENV = { DOCKER_HOST: TLS_HOST, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs('client') };

/** Whether the TLS engine answers; in CI its absence fails the run (never a silent skip). */
async function tlsEngineAvailable(): Promise<boolean> {
  try {
    const docker = connectEngine({ env: TLS_ENV });
    await docker.ping();
    await docker.getImage(TEST_IMAGE).inspect();
    return true;
  } catch (err) {
    const why = `TLS engine ${TLS_HOST} (certificates in ${TLS_DIR}) or image ${TEST_IMAGE} unavailable: ${(err as Error).message}`;
    if (process.env.CI) throw new Error(`${why}. The remote-engine suite must run in CI (see .ci/system-deps.sh).`);
    console.warn(`\n!! SKIPPING the remote (TLS) engine tests: ${why}\n!! Run bash .ci/system-deps.sh to start it.\n`);
    return false;
  }
}

describe('engine address, as the docker CLI resolves it', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ctxfs-certs-'));
    for (const f of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(dir, f), `-----${f}-----\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('no DOCKER_HOST: the local socket; unix:// names another', () => {
    expect(resolveEngine({ env: {} })).toEqual({ kind: 'unix', socketPath: defaultSocketPath() });
    expect(defaultSocketPath()).toMatch(/^(\/var\/run\/docker\.sock|.*\/\.docker\/run\/docker\.sock)$/);
    expect(resolveEngine({ env: { DOCKER_HOST: 'unix:///run/x.sock' } })).toEqual({ kind: 'unix', socketPath: '/run/x.sock' });
  });

  it('tcp:// without DOCKER_TLS_VERIFY is plain (port 2375 by default); with it, TLS from DOCKER_CERT_PATH (port 2376)', () => {
    expect(resolveEngine({ env: { DOCKER_HOST: 'tcp://10.1.2.3' } })).toEqual({ kind: 'tcp', host: '10.1.2.3', port: 2375 });
    expect(resolveEngine({ env: { DOCKER_HOST: 'tcp://10.1.2.3:4000', DOCKER_TLS_VERIFY: '', DOCKER_CERT_PATH: dir } })).toEqual({
      kind: 'tcp',
      host: '10.1.2.3',
      port: 4000,
    });
    // Any non-empty value turns verification on, as in the docker CLI.
    const a = resolveEngine({ env: { DOCKER_HOST: 'tcp://10.1.2.3', DOCKER_TLS_VERIFY: 'true', DOCKER_CERT_PATH: dir } });
    expect(a).toMatchObject({ kind: 'tcp', host: '10.1.2.3', port: 2376 });
    expect(a.kind === 'tcp' && a.tls?.ca.toString()).toBe('-----ca.pem-----\n');
    expect(a.kind === 'tcp' && a.tls?.key?.toString()).toBe('-----key.pem-----\n');
  });

  it('a missing certificate file or a malformed address is EINVAL saying what to fix', async () => {
    const missing = await errorOf(
      (async () => resolveEngine({ env: { DOCKER_HOST: 'tcp://h:1', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/nonexistent' } }))(),
    );
    expect(missing.code).toBe('EINVAL');
    expect(missing.message).toContain('DOCKER_CERT_PATH /nonexistent has no readable ca.pem');
    expect(missing.hint).toMatch(/ca\.pem, cert\.pem and key\.pem/);
    const bad = await errorOf((async () => resolveEngine({ env: { DOCKER_HOST: 'tcp://h:99999' } }))());
    expect(bad.code).toBe('EINVAL');
    expect((await errorOf((async () => resolveEngine({ env: { DOCKER_HOST: 'ftp://h' } }))())).code).toBe('EINVAL');
  });

  it('explicit options win over the environment, and the environment does not leak into them', () => {
    const env = { DOCKER_HOST: 'tcp://elsewhere:2375' };
    expect(resolveEngine({ socketPath: '/run/mine.sock', env })).toEqual({ kind: 'unix', socketPath: '/run/mine.sock' });
    expect(resolveEngine({ host: 'tcp://10.0.0.9', certPath: dir, env })).toMatchObject({ kind: 'tcp', host: '10.0.0.9', port: 2376 });
    expect(resolveEngine({ host: 'build-box', port: 2375, env })).toEqual({ kind: 'tcp', host: 'build-box', port: 2375 });
    expect(resolveEngine({ podman: true, socketPath: '/run/p.sock', env })).toEqual({ kind: 'unix', socketPath: '/run/p.sock' });
    expect(resolveEngine({ podman: true, env: { CONTAINER_HOST: 'unix:///run/c.sock' } })).toEqual({ kind: 'unix', socketPath: '/run/c.sock' });
    // Without either, the rootful socket for root, the user's runtime directory otherwise.
    const uid = process.getuid?.() ?? 0;
    expect(resolveEngine({ podman: true, env: { XDG_RUNTIME_DIR: '/run/user/1234' } })).toEqual({
      kind: 'unix',
      socketPath: uid === 0 ? '/run/podman/podman.sock' : '/run/user/1234/podman/podman.sock',
    });
    const prior = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'tcp://elsewhere:2375';
    try {
      const m = connectEngine({ socketPath: '/run/mine.sock' }).modem as unknown as { socketPath?: string; host?: string };
      expect(m.socketPath).toBe('/run/mine.sock');
      expect(m.host).toBeUndefined();
    } finally {
      if (prior === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = prior;
    }
  });
});

const available = await tlsEngineAvailable();

describe.runIf(available)('a remote engine over TLS with client certificates', () => {
  const opened: ContainerFilesystem[] = [];
  afterAll(async () => {
    for (const fs of opened) await fs.close().catch(() => {});
    await removeTestContainers(connectEngine({ env: TLS_ENV }));
  });

  async function open(engine: EngineOptions, extra: Partial<Parameters<typeof ContainerFilesystem.open>[0]> = {}) {
    const fs = await ContainerFilesystem.open({ image: TEST_IMAGE, labels: TEST_LABELS, engine, ...extra });
    opened.push(fs);
    return fs;
  }

  it('from DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH: the container operations work end to end', { timeout: 120_000 }, async () => {
    const fs = await open({ env: TLS_ENV });
    const engine = fs.docker.modem as unknown as { protocol?: string; host?: string; port?: number };
    expect(engine).toMatchObject({ protocol: 'https', host: '127.0.0.1' });
    // Small files through the helper session (an exec hijacked over TLS).
    await fs.write('src/a.ts', 'export const needle = 1;\n', { createParents: true });
    await fs.write('src/b.ts', 'const other = 2;\n');
    expect(new TextDecoder().decode(await fs.readBytes('src/a.ts'))).toBe('export const needle = 1;\n');
    expect((await fs.stat('src/b.ts')).size).toBe(17);
    expect((await fs.list('src')).map((e) => e.name)).toEqual(['a.ts', 'b.ts']);
    const matches = [];
    for await (const m of fs.grep('needle')) matches.push(`${m.path}:${m.line}`);
    expect(matches).toEqual(['src/a.ts:1']);
    // A large file streams both ways (exec stdin and stdout over TLS, and the archive endpoint).
    const big = Buffer.alloc(12 << 20);
    for (let i = 0; i < big.length; i += 4096) big[i] = (i >>> 12) & 0xff;
    await fs.writeBytes('big.bin', big);
    expect(Buffer.from(await fs.readBytes('big.bin')).equals(big)).toBe(true);
    const reader = await fs.openRead('big.bin', { chunkSize: 1 << 20 });
    let n = 0;
    for await (const c of reader) n += c.byteLength;
    await reader.close();
    expect(n).toBe(big.length);
    // Snapshot and restore (archive endpoints), rename and delete.
    const snap = await fs.snapshot();
    await fs.rename('src/b.ts', 'src/c.ts');
    await fs.delete('big.bin');
    await fs.restore(snap);
    expect((await fs.list('src')).map((e) => e.name)).toEqual(['a.ts', 'b.ts']);
    expect(await fs.exists('big.bin')).toBe(true);
    // Compare-and-swap holds over the remote engine too.
    const hash = sha256Hex(await fs.readBytes('src/a.ts'));
    await fs.write('src/a.ts', 'changed\n', { ifMatch: hash });
    expect((await errorOf(fs.write('src/a.ts', 'again\n', { ifMatch: hash }))).code).toBe('ECONFLICT');
  });

  it('from explicit options (host and certPath), attaching to a running container', async () => {
    const first = await open({ env: TLS_ENV });
    await first.write('hello.txt', 'over tls');
    const fs = await open({ host: TLS_HOST, certPath: certs('client') }, { image: undefined, container: first.containerRef, workdir: '/work' });
    expect(new TextDecoder().decode(await fs.readBytes('hello.txt'))).toBe('over tls');
  });

  it('an engine certificate from an untrusted CA is EACCES: refused, with which CA to give', async () => {
    const err = await errorOf(open(mixed('rogue-ca', 'client')));
    expect(err.code).toBe('EACCES');
    expect(err.op).toBe('open');
    expect(err.message).toMatch(/the container engine at https:\/\/127\.0\.0\.1:\d+ \(TCP with TLS\) refused/);
    expect(err.message).toContain('does not verify against the CA');
    expect(err.hint).toMatch(/CA that signed the engine's certificate/);
  });

  it('a client certificate the engine does not trust is EACCES: the engine refused it, with what to use', async () => {
    const err = await errorOf(open(mixed('ca', 'rogue-client')));
    expect(err.code).toBe('EACCES');
    expect(err.message).toContain('refused the client certificate');
    expect(err.hint).toMatch(/signed by the CA in the engine's --tlscacert/);
    // No client certificate at all: the same refusal.
    const none = await errorOf(open({ host: TLS_HOST, ca: readFileSync(join(certs('ca'), 'ca.pem')) }));
    expect(none.code).toBe('EACCES');
    expect(none.message).toContain('refused the client certificate');
  });

  it('plain HTTP to the TLS engine is EACCES saying it speaks TLS', async () => {
    const err = await errorOf(open({ env: { DOCKER_HOST: TLS_HOST } }));
    expect(err.code).toBe('EACCES');
    expect(err.message).toContain('speaks TLS');
    expect(err.hint).toMatch(/DOCKER_TLS_VERIFY=1/);
  });

  it('a stopped engine is EUNAVAILABLE saying the engine does not answer, for attach and for create', async () => {
    // A port that was just free: nothing listens there, as when the engine is stopped.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const env = { ...TLS_ENV, DOCKER_HOST: `tcp://127.0.0.1:${port}` };
    const attach = await errorOf(ContainerFilesystem.open({ container: 'sandbox', engine: { env } }));
    expect(attach.code).toBe('EUNAVAILABLE');
    expect(attach.message).toContain(`the container engine at https://127.0.0.1:${port} (TCP with TLS) does not answer`);
    expect(attach.hint).toMatch(/start the container \(or the container engine\) again/);
    const create = await errorOf(ContainerFilesystem.open({ image: TEST_IMAGE, engine: { env } }));
    expect(create.code).toBe('EUNAVAILABLE');
    expect(create.message).toContain('does not answer');
  });
});
