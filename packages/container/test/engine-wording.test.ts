/**
 * How an engine failure names the engine: by what the connection is (a
 * Unix socket, plain TCP, TCP with TLS, SSH) and by the engine's own name
 * once it has said it (its /_ping answer), never "the Docker engine" for an
 * engine that never answered. Every message said "the Docker engine at …",
 * over TLS, over SSH, and for Podman's service before it had answered.
 *
 * No engine is needed: nothing listens on 127.0.0.1:9 (the discard port),
 * and a fake engine answers /_ping with Docker's or Podman's headers, then
 * stops, as an engine that goes away does. The SSH client connects to that
 * port like any other and is refused before a word of SSH is said.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineRefusal } from '../src/container-errors.ts';
import { ContainerFilesystem, closeEngine, connectEngine, containerUnavailability, type EngineOptions, engineName } from '../src/index.ts';
import { SshEngineError } from '../src/ssh-transport.ts';
import { errorOf } from './docker-fixture.ts';

/** A CA the TLS client is given: nothing is verified, the connection is refused first. */
const CA = '-----BEGIN CERTIFICATE-----\nnot checked before the connection\n-----END CERTIFICATE-----\n';

let dir: string;
let knownHosts: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ctxfs-engine-wording-'));
  knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, '');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TLS: EngineOptions = { host: 'https://127.0.0.1:9', ca: CA };
const ssh = (): EngineOptions => ({ host: 'ssh://nobody@127.0.0.1:9', ssh: { knownHosts, agent: false } });

/** The failure of opening a workspace on `engine`, attaching to a container and creating one. */
async function failures(engine: EngineOptions) {
  const docker = connectEngine(engine);
  try {
    return [
      await errorOf(ContainerFilesystem.open({ container: 'sandbox', engine: { docker } })),
      await errorOf(ContainerFilesystem.open({ image: 'busybox', engine: { docker } })),
    ];
  } finally {
    closeEngine(docker);
  }
}

describe('an engine that does not answer is named by its connection', () => {
  it('TLS: the container engine at https://… (TCP with TLS), not the Docker engine', async () => {
    const [attach, create] = await failures(TLS);
    for (const err of [attach, create]) {
      expect(err?.code).toBe('EUNAVAILABLE');
      expect(err?.message).toContain('the container engine at https://127.0.0.1:9 (TCP with TLS) does not answer');
      expect(`${err?.message} ${err?.hint}`).not.toContain('Docker');
    }
    expect(attach?.hint).toContain('start the container (or the container engine) again');
  });

  it('SSH: the container engine at ssh://… (over SSH); the SSH client is refused by the port like any client', async () => {
    for (const err of await failures(ssh())) {
      expect(err.code).toBe('EUNAVAILABLE');
      expect(err.message).toContain('the container engine at ssh://nobody@127.0.0.1:9 (over SSH) does not answer');
      expect(err.message).toContain('ECONNREFUSED');
      expect(`${err.message} ${err.hint}`).not.toContain('Docker');
    }
  });

  it('plain TCP says so; a Unix socket needs no word', async () => {
    const [tcp] = await failures({ host: 'tcp://127.0.0.1:9' });
    expect(tcp?.message).toContain('the container engine at http://127.0.0.1:9 (plain TCP, no TLS) does not answer');
    const [unix] = await failures({ socketPath: join(dir, 'no-engine.sock') });
    expect(unix?.message).toContain(`the container engine at unix://${join(dir, 'no-engine.sock')} does not answer`);
    // Asked for by name, Podman's service is Podman before it answers.
    const [podman] = await failures({ podman: true, socketPath: join(dir, 'no-engine.sock') });
    expect(podman?.message).toContain(`the Podman engine at unix://${join(dir, 'no-engine.sock')} does not answer`);
  });
});

describe('an engine that does not answer a workspace opened from an image', () => {
  // It said "container 'busybox' is unreachable: …" and "start the container (or the container engine) again", of a
  // container that was never made: the name was the image's.
  it('names the image a container was to be made from, and the engine to start; no container is said to exist', async () => {
    const socket = join(dir, 'no-engine.sock');
    for (const [engine, title] of [
      [{ socketPath: socket }, 'container'],
      [{ podman: true, socketPath: socket }, 'Podman'],
    ] as const) {
      const err = await errorOf(ContainerFilesystem.open({ image: 'busybox', engine }));
      expect(err.code).toBe('EUNAVAILABLE');
      expect(err.reason).toBe(
        `cannot create a container from image 'busybox': the ${title} engine at unix://${socket} does not answer (connect ENOENT ${socket})`,
      );
      expect(err.hint).toBe(`start the ${title} engine (or name one that runs in the engine option) and open the workspace again; no container was created`);
      expect(err.message).not.toContain("container 'busybox'");
      // No container was made, so none is said to have become unreachable.
      expect(containerUnavailability(err)).toBeUndefined();
    }
  });
});

describe('an engine that refused us, or that we refused, is named by its connection', () => {
  it('TLS: a certificate that does not verify', () => {
    const docker = connectEngine(TLS);
    const untrusted = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    const err = engineRefusal('open', docker, untrusted);
    expect(err?.code).toBe('EACCES');
    expect(err?.message).toContain('the container engine at https://127.0.0.1:9 (TCP with TLS) refused: its certificate does not verify');
  });

  it('SSH: a login refused', () => {
    const docker = connectEngine(ssh());
    try {
      const refused = new SshEngineError('auth-refused', "refused the SSH login of user 'nobody' (tried no key)", 'add the public key');
      const err = engineRefusal('open', docker, refused);
      expect(err?.code).toBe('EACCES');
      expect(err?.message).toContain("the container engine at ssh://nobody@127.0.0.1:9 (over SSH) refused the SSH login of user 'nobody'");
    } finally {
      closeEngine(docker);
    }
  });
});

describe('an engine that has said what it is is named so once it stops answering', () => {
  /** A fake engine that answers /_ping with `headers` and nothing else, on a free port. */
  async function fakeEngine(headers: Record<string, string>): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      if (req.url?.endsWith('/_ping')) res.writeHead(200, headers).end('OK');
      else res.writeHead(500).end('{"message":"fake engine"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: (server.address() as { port: number }).port };
  }

  for (const [name, title, headers] of [
    ['podman', 'Podman', { 'Libpod-Api-Version': '5.4.2', Server: 'Libpod/5.4.2 (linux)' }],
    ['docker', 'Docker', { Server: 'Docker/28.3.0 (linux)' }],
  ] as const) {
    it(`${title}, after its /_ping named it`, async () => {
      const { server, port } = await fakeEngine(headers);
      const docker = connectEngine({ host: `tcp://127.0.0.1:${port}` });
      expect(await engineName(docker)).toBe(name);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const err = await errorOf(ContainerFilesystem.open({ container: 'sandbox', engine: { docker } }));
      expect(err.code).toBe('EUNAVAILABLE');
      expect(err.message).toContain(`the ${title} engine at http://127.0.0.1:${port} (plain TCP, no TLS) does not answer`);
      expect(err.hint).toContain(`(or the ${title} engine)`);
    });
  }
});
