/**
 * The engine connection: where the Docker Engine API is (a Unix socket, TCP
 * with or without TLS, a host reached over SSH, Podman's API service) and
 * with which certificates or keys, from explicit options or from the
 * environment exactly as the docker CLI reads it (`DOCKER_HOST`,
 * `DOCKER_TLS_VERIFY`, `DOCKER_CERT_PATH`; `SSH_AUTH_SOCK` and
 * `~/.ssh/known_hosts` for `ssh://`).
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { IncomingMessage } from 'node:http';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import { FsError } from '@ctxfs/core';
import Docker from 'dockerode';
import ssh2 from 'ssh2';
import { SshIdentity, type SshTarget, SshTransport } from './ssh-transport.ts';

/**
 * How to log in to an engine's host over SSH (`ssh://user@host[:port]`).
 * Defaults follow the docker CLI, which runs `ssh`: the agent at
 * `SSH_AUTH_SOCK`, then `~/.ssh/id_rsa`, `id_ecdsa` and `id_ed25519` where
 * they exist (and need no passphrase, or take `passphrase`); the host key
 * must be in `~/.ssh/known_hosts` or `/etc/ssh/ssh_known_hosts`. An unknown
 * or changed host key is refused (`EACCES`), never trusted silently.
 *
 * @example
 * ```ts
 * const docker = connectEngine({
 *   host: 'ssh://deploy@build-box:2222',
 *   ssh: { privateKey: '/home/me/.ssh/build_ed25519', knownHosts: '/etc/ctxfs/known_hosts' },
 * });
 * ```
 */
export interface SshOptions {
  /**
   * The private key to log in with (OpenSSH or PEM format): its text, a
   * Buffer of it, or the path of its file. When given, only this key is
   * offered (plus `agent` if that is set explicitly), as `ssh -i key -o
   * IdentitiesOnly=yes` does.
   */
  privateKey?: string | Buffer;
  /** Passphrase of an encrypted private key. */
  passphrase?: string | Buffer;
  /** An ssh-agent's socket; default `SSH_AUTH_SOCK` when no `privateKey` is given; `false` for none. */
  agent?: string | false;
  /** known_hosts file(s) the host key must be in; default `~/.ssh/known_hosts` and `/etc/ssh/ssh_known_hosts`. */
  knownHosts?: string | readonly string[];
  /** How long the TCP connect, SSH handshake and login may take; default 20 000 ms. */
  readyTimeoutMs?: number;
}

/** How to reach the engine. Everything optional: defaults follow the docker CLI. */
export interface EngineOptions {
  /** A ready client; wins over every other option. */
  docker?: Docker;
  /** Unix socket (or Windows named pipe) of the engine, e.g. `/var/run/docker.sock`. */
  socketPath?: string;
  /**
   * Podman's Docker-compatible API service (`podman system service`): its
   * socket is `socketPath` when given, else `CONTAINER_HOST` (a `unix://`
   * address), else the rootful `/run/podman/podman.sock` for root and
   * `$XDG_RUNTIME_DIR/podman/podman.sock` for other users.
   */
  podman?: boolean;
  /**
   * A remote engine: `tcp://host:port`, `ssh://user@host[:port]`,
   * `unix:///path` or a bare host name, as `DOCKER_HOST` takes it. TLS is
   * used when `protocol` is `https`, `tlsVerify` is set or any certificate
   * option is given; SSH logs in with {@link EngineOptions.ssh}.
   */
  host?: string;
  /** Port of `host` when the address names none; default 2376 with TLS, 2375 without (the CLI's). */
  port?: number | string;
  protocol?: 'http' | 'https' | 'ssh';
  /** Verify the engine's certificate against `ca` and present the client certificate (DOCKER_TLS_VERIFY). */
  tlsVerify?: boolean;
  /** TLS material (PEM text or buffers), as in `DOCKER_CERT_PATH/{ca,cert,key}.pem`. Wins over `certPath`. */
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Directory holding `ca.pem`, `cert.pem` and `key.pem` (DOCKER_CERT_PATH). */
  certPath?: string;
  /** Keys, agent and known_hosts for an `ssh://` engine (from `host` or `DOCKER_HOST`). */
  ssh?: SshOptions;
  /** API request timeout in ms (not applied to streams). */
  timeout?: number;
  /** Where the `DOCKER_*` variables are read when no address option is given; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Certificates of a TLS connection: the CA the engine's certificate must chain to, and the client's own. */
export interface TlsMaterial {
  readonly ca: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

/** Where the engine is, resolved from options and environment (what {@link connectEngine} connects to). */
export type EngineAddress =
  | { readonly kind: 'unix'; readonly socketPath: string }
  | {
      readonly kind: 'tcp';
      readonly host: string;
      readonly port: number;
      /** Certificates are verified (and ours presented) when present: docker CLI semantics of TLS verify. */
      readonly tls?: TlsMaterial;
    }
  | ({ readonly kind: 'ssh' } & SshTarget);

/**
 * The local engine's socket: Docker Desktop's per-user one when it exists (as
 * docker-modem picks), else the system's.
 *
 * @example
 * ```ts
 * defaultSocketPath(); // '/var/run/docker.sock' on a Linux host with a system dockerd
 * ```
 */
export function defaultSocketPath(): string {
  const user = join(homedir(), '.docker', 'run', 'docker.sock');
  return existsSync(user) ? user : '/var/run/docker.sock';
}

function invalid(reason: string, hint: string, cause?: unknown): FsError {
  return new FsError({ code: 'EINVAL', op: 'open', reason, hint, cause });
}

/** Reads `name` from a certificate directory, saying which variable or option pointed there when it is missing. */
function certFile(dir: string, name: string, source: string): Buffer {
  try {
    return readFileSync(join(dir, name));
  } catch (err) {
    throw invalid(
      `${source} ${dir} has no readable ${name} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      'point it at a directory holding ca.pem, cert.pem and key.pem, as the docker CLI expects',
      err,
    );
  }
}

/** Parses a DOCKER_HOST-style address; a bare name is a TCP host. */
function parseAddress(raw: string, source: string): URL {
  const text = raw.includes('://') ? raw : `tcp://${raw}`;
  try {
    return new URL(text);
  } catch (err) {
    throw invalid(`${source} '${raw}' is not an engine address`, 'use unix:///path/to/socket, tcp://host:port or ssh://user@host', err);
  }
}

function validPort(portText: string, fallback: number, url: URL, source: string): number {
  const port = portText === '' ? fallback : Number(portText);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw invalid(`${source} '${url.href}' has no valid port`, 'give a port between 1 and 65535');
  return port;
}

/** The key `privateKey` gives (text, Buffer or a path), parsed now so a bad key or passphrase is EINVAL at open. */
function explicitIdentity(value: string | Buffer, passphrase: string | Buffer | undefined): SshIdentity {
  const isText = Buffer.isBuffer(value) || value.includes('-----BEGIN');
  const source = isText ? 'the privateKey option' : `the key file ${value}`;
  let data: string | Buffer = value;
  if (!isText) {
    try {
      data = readFileSync(value);
    } catch (err) {
      throw invalid(
        `${source} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        'pass the path of an SSH private key, or its text',
        err,
      );
    }
  }
  const key = ssh2.utils.parseKey(data, passphrase);
  if (key instanceof Error || !key.isPrivateKey()) {
    const why = key instanceof Error ? key.message : 'it holds a public key only';
    const encrypted = key instanceof Error && /encrypt|passphrase|decrypt|bad decrypt/i.test(why);
    throw invalid(
      `${source} is not a usable SSH private key (${why})`,
      encrypted ? 'pass the right ssh.passphrase for this key' : 'pass an OpenSSH or PEM private key (ed25519, ecdsa or rsa), e.g. one made by ssh-keygen',
    );
  }
  return new SshIdentity(key, source);
}

/** The identity files `ssh` tries by default, where they exist and open without a prompt. */
function defaultIdentities(home: string, passphrase: string | Buffer | undefined): SshIdentity[] {
  const out: SshIdentity[] = [];
  for (const name of ['id_rsa', 'id_ecdsa', 'id_ed25519']) {
    const file = join(home, '.ssh', name);
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch {
      continue;
    }
    const key = ssh2.utils.parseKey(data, passphrase);
    // An encrypted key would need a prompt, which ssh would show; here it is skipped, as the agent may hold it.
    if (!(key instanceof Error) && key.isPrivateKey()) out.push(new SshIdentity(key, `the key file ${file}`));
  }
  return out;
}

function sshTarget(url: URL, portText: string, options: EngineOptions, env: Readonly<Record<string, string | undefined>>, source: string): EngineAddress {
  const o = options.ssh ?? {};
  const home = env.HOME || homedir();
  let username = decodeURIComponent(url.username);
  if (username === '') {
    try {
      username = userInfo().username;
    } catch (err) {
      throw invalid(`${source} '${url.href}' names no user and the local one is unknown`, 'write the user in the address: ssh://user@host', err);
    }
  }
  const knownHosts = o.knownHosts === undefined ? [join(home, '.ssh', 'known_hosts'), '/etc/ssh/ssh_known_hosts'] : [o.knownHosts].flat();
  if (o.knownHosts !== undefined) {
    for (const f of knownHosts) {
      if (!existsSync(f))
        throw invalid(`the known_hosts file ${f} (ssh.knownHosts) does not exist`, "pass a file holding the host's key, e.g. made by ssh-keyscan");
    }
  }
  const identities = o.privateKey === undefined ? defaultIdentities(home, o.passphrase) : [explicitIdentity(o.privateKey, o.passphrase)];
  const agent = o.agent === false ? undefined : (o.agent ?? (o.privateKey === undefined ? env.SSH_AUTH_SOCK || undefined : undefined));
  const readyTimeoutMs = o.readyTimeoutMs ?? 20_000;
  if (!(Number.isSafeInteger(readyTimeoutMs) && readyTimeoutMs > 0))
    throw invalid(`ssh.readyTimeoutMs must be a positive whole number of ms, got ${String(readyTimeoutMs)}`, 'pass e.g. 20000');
  return {
    kind: 'ssh',
    // URL keeps brackets around an IPv6 literal; sockets want it bare.
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: validPort(portText, 22, url, source),
    username,
    identities,
    ...(agent === undefined ? {} : { agent }),
    knownHosts,
    readyTimeoutMs,
  };
}

function tcpOrSsh(
  url: URL,
  tls: TlsMaterial | undefined,
  options: EngineOptions,
  env: Readonly<Record<string, string | undefined>>,
  source: string,
): EngineAddress {
  const explicitPort = source === 'DOCKER_HOST' ? undefined : options.port;
  const portText = url.port || (explicitPort === undefined ? '' : String(explicitPort));
  if (url.protocol === 'ssh:') return sshTarget(url, portText, options, env, source);
  if (url.protocol !== 'tcp:' && url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`${source} '${url.href}' uses an unknown scheme`, 'use unix://, tcp:// or ssh://');
  }
  const port = validPort(portText, tls ? 2376 : 2375, url, source);
  // URL keeps brackets around an IPv6 literal; sockets want it bare.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return tls ? { kind: 'tcp', host, port, tls } : { kind: 'tcp', host, port };
}

function podmanSocket(options: EngineOptions, env: Readonly<Record<string, string | undefined>>): string {
  if (options.socketPath) return options.socketPath;
  const fromEnv = env.CONTAINER_HOST;
  if (fromEnv?.startsWith('unix://')) return fromEnv.slice('unix://'.length);
  const uid = process.getuid?.() ?? 0;
  if (uid === 0) return '/run/podman/podman.sock';
  return join(env.XDG_RUNTIME_DIR ?? `/run/user/${uid}`, 'podman', 'podman.sock');
}

/**
 * Where the engine is, from explicit options first, else the environment as
 * the docker CLI reads it: `DOCKER_HOST` (unset: the local socket, see
 * {@link defaultSocketPath}),
 * `DOCKER_TLS_VERIFY` (any non-empty value turns TLS on with verification)
 * and `DOCKER_CERT_PATH` (default `~/.docker`); for `ssh://`, `SSH_AUTH_SOCK`
 * and `HOME` (see {@link SshOptions}). Missing certificate files, unreadable
 * keys and malformed addresses are `EINVAL` with what to fix.
 *
 * @example
 * ```ts
 * resolveEngine({ env: { DOCKER_HOST: 'tcp://10.0.0.5:2376', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/certs' } });
 * // { kind: 'tcp', host: '10.0.0.5', port: 2376, tls: { ca, cert, key } }
 * resolveEngine({ env: { DOCKER_HOST: 'ssh://deploy@10.0.0.5', SSH_AUTH_SOCK: '/tmp/agent.sock', HOME: '/home/me' } });
 * // { kind: 'ssh', host: '10.0.0.5', port: 22, username: 'deploy', agent: '/tmp/agent.sock',
 * //   knownHosts: ['/home/me/.ssh/known_hosts', '/etc/ssh/ssh_known_hosts'], identities: [...], readyTimeoutMs: 20000 }
 * ```
 */
export function resolveEngine(options: Omit<EngineOptions, 'docker'> = {}): EngineAddress {
  const env = options.env ?? process.env;
  if (options.podman) return { kind: 'unix', socketPath: podmanSocket(options, env) };
  if (options.socketPath) return { kind: 'unix', socketPath: options.socketPath };
  if (options.host !== undefined) {
    if (options.host.startsWith('unix://')) return { kind: 'unix', socketPath: options.host.slice('unix://'.length) || defaultSocketPath() };
    const url = parseAddress(options.host, 'engine host');
    const wantsTls =
      options.protocol === 'https' ||
      url.protocol === 'https:' ||
      options.tlsVerify === true ||
      options.certPath !== undefined ||
      options.ca !== undefined ||
      options.cert !== undefined;
    let tls: TlsMaterial | undefined;
    if (wantsTls && options.protocol !== 'ssh') {
      const dir = options.certPath;
      const ca = options.ca ?? (dir ? certFile(dir, 'ca.pem', 'certPath') : undefined);
      if (ca === undefined) throw invalid('TLS was asked for without a CA certificate', 'pass ca (or certPath with ca.pem) so the engine can be verified');
      tls = {
        ca,
        cert: options.cert ?? (dir ? certFile(dir, 'cert.pem', 'certPath') : undefined),
        key: options.key ?? (dir ? certFile(dir, 'key.pem', 'certPath') : undefined),
      };
    }
    const u = options.protocol === 'ssh' ? new URL(`ssh://${url.username === '' ? '' : `${url.username}@`}${url.host}`) : url;
    return tcpOrSsh(u, tls, options, env, 'engine host');
  }
  const dockerHost = env.DOCKER_HOST;
  if (dockerHost === undefined || dockerHost === '') return { kind: 'unix', socketPath: defaultSocketPath() };
  if (dockerHost.startsWith('unix://')) return { kind: 'unix', socketPath: dockerHost.slice('unix://'.length) || defaultSocketPath() };
  const url = parseAddress(dockerHost, 'DOCKER_HOST');
  let tls: TlsMaterial | undefined;
  if ((env.DOCKER_TLS_VERIFY ?? '') !== '' && url.protocol !== 'ssh:') {
    const dir = env.DOCKER_CERT_PATH || join(homedir(), '.docker');
    const source = env.DOCKER_CERT_PATH ? 'DOCKER_CERT_PATH' : 'the default certificate directory';
    tls = { ca: certFile(dir, 'ca.pem', source), cert: certFile(dir, 'cert.pem', source), key: certFile(dir, 'key.pem', source) };
  }
  return tcpOrSsh(url, tls, options, env, 'DOCKER_HOST');
}

/** The SSH transport of each engine client made for an `ssh://` address (for messages and for closing it). */
const sshTransports = new WeakMap<Docker, SshTransport>();

/**
 * Builds the dockerode client for {@link resolveEngine}'s address. Every
 * connection setting is passed explicitly, so variables the address did not
 * come from (a `DOCKER_HOST` beside an explicit socket) cannot leak in. An
 * `ssh://` engine is reached through ctxfs's own SSH transport (one SSH
 * connection shared by the client's requests, host key checked against
 * known_hosts), not docker-modem's, which logs in again for every request
 * and trusts any host key.
 *
 * @example
 * ```ts
 * const docker = connectEngine({ host: 'tcp://build-box:2376', certPath: '/etc/docker/certs' });
 * const podman = connectEngine({ podman: true });
 * const remote = connectEngine({ env: { ...process.env, DOCKER_HOST: 'ssh://deploy@build-box' } });
 * ```
 */
export function connectEngine(options: EngineOptions = {}): Docker {
  if (options.docker) return options.docker;
  const address = resolveEngine(options);
  const none = {
    socketPath: undefined,
    host: undefined,
    port: undefined,
    ca: undefined,
    cert: undefined,
    key: undefined,
    protocol: undefined,
    username: undefined,
  };
  const timeout = options.timeout;
  try {
    if (address.kind === 'unix') {
      const docker = new Docker({ ...none, socketPath: address.socketPath, timeout });
      // Asked for by name: an engine that never answers is still named Podman in the messages about it.
      if (options.podman) knownNames.set(docker, 'podman');
      return docker;
    }
    if (address.kind === 'ssh') {
      const transport = new SshTransport(address);
      // Plain HTTP through the agent; the host name only fills the Host header (dial-stdio ignores it).
      // docker-modem takes an agent; its typings do not say so.
      const viaSsh: Docker.DockerOptions & { agent: SshTransport } = { ...none, protocol: 'http', host: 'localhost', agent: transport, timeout };
      const docker = new Docker(viaSsh);
      sshTransports.set(docker, transport);
      return docker;
    }
    const { tls } = address;
    return new Docker({ ...none, host: address.host, port: address.port, protocol: tls ? 'https' : 'http', timeout, ...tls });
  } catch (err) {
    // docker-modem reads DOCKER_HOST and DOCKER_CERT_PATH itself before our options override them.
    throw invalid(`the engine client could not be set up: ${(err as Error).message}`, 'check DOCKER_HOST and DOCKER_CERT_PATH', err);
  }
}

/**
 * Ends the SSH connections of a client {@link connectEngine} made for an
 * `ssh://` engine (idle ones also end by themselves after 30 s); other
 * clients hold nothing to close.
 */
export function closeEngine(docker: Docker): void {
  sshTransports.get(docker)?.close();
}

/** Which engine answers the Docker Engine API: what a person types to act on its containers. */
export type EngineName = 'docker' | 'podman';

/** Each client's engine, asked once: the engine at an address stays the same while the client lives. */
const engineNames = new WeakMap<Docker, Promise<EngineName>>();

/** Each client's engine once it has answered, for messages about an engine that has stopped answering. */
const knownNames = new WeakMap<Docker, EngineName>();

/**
 * The engine a `/_ping` answer's headers name: Podman's service sends
 * `Libpod-Api-Version` (and `Server: Libpod/…`), Docker `Server: Docker/…`;
 * `undefined` when they name neither.
 */
function pingEngine(docker: Docker): Promise<EngineName | undefined> {
  return new Promise((resolve, reject) => {
    docker.modem.dial({ path: '/_ping', method: 'GET', isStream: true, statusCodes: { 200: true } }, (err, res) => {
      if (err !== null || !(res instanceof IncomingMessage)) {
        reject(err ?? new Error('the engine gave no answer to /_ping'));
        return;
      }
      res.resume();
      const server = String(res.headers.server ?? '');
      if (res.headers['libpod-api-version'] !== undefined || /libpod/i.test(server)) resolve('podman');
      else resolve(/docker/i.test(server) ? 'docker' : undefined);
    });
  });
}

/**
 * Which engine `docker` talks to. Podman's Docker-compatible service is
 * reached as any Docker engine (`DOCKER_HOST`, a socket path), so only its
 * answers tell it apart: the headers of its `/_ping` answer, else its
 * `/version` answer, which lists a "Podman Engine" component (and takes
 * Podman about 2 s: the ping a few milliseconds). An engine that does not
 * answer is taken for Docker, whose API this is.
 *
 * @example
 * ```ts
 * await engineName(connectEngine({ podman: true })); // 'podman'
 * ```
 */
export function engineName(docker: Docker): Promise<EngineName> {
  let name = engineNames.get(docker);
  if (name === undefined) {
    name = pingEngine(docker)
      .then(async (pinged) => pinged ?? engineNameOf(await docker.version()))
      .then(
        (known) => {
          knownNames.set(docker, known);
          return known;
        },
        () => {
          // Asked again next time: an engine that is down now may answer later.
          engineNames.delete(docker);
          return 'docker';
        },
      );
    engineNames.set(docker, name);
  }
  return name;
}

/**
 * Which engine `docker` talks to, without asking: what {@link engineName}
 * learnt from an earlier answer (or the `podman` option of
 * {@link connectEngine}), `undefined` when nothing was learnt. For a message
 * about an engine that does not answer now.
 */
export function knownEngineName(docker: Docker): EngineName | undefined {
  return knownNames.get(docker);
}

/**
 * Which engine gave the `/version` answer `version`: Podman lists a "Podman
 * Engine" component; anything else is Docker's API. For a caller that has
 * the answer already (it wants the version too) and need not ask twice.
 *
 * @example
 * ```ts
 * const v = await docker.version();
 * engineNameOf(v); // 'podman' or 'docker'
 * ```
 */
export function engineNameOf(version: { readonly Components?: ReadonlyArray<{ readonly Name: string }> | undefined }): EngineName {
  return (version.Components ?? []).some((c) => /podman/i.test(c.Name)) ? 'podman' : 'docker';
}

/** The engine as its users call it, for messages: "container" (as in "the container engine") while it has not said which it is. */
export function engineTitle(engine: EngineName | undefined): string {
  return engine === 'podman' ? 'Podman' : engine === 'docker' ? 'Docker' : 'container';
}

/**
 * The engine as a message names it: which engine, where, and over what
 * connection. The engine is Docker or Podman once it has said so (see
 * {@link knownEngineName}: its `/_ping` answer, or the `podman` option),
 * else "the container engine": one that never answered is not taken for
 * Docker. The connection is said where the address alone does not say it
 * to a reader: TCP with TLS, plain TCP, SSH (a Unix socket needs no word).
 *
 * @example
 * ```ts
 * describeEngine(connectEngine({ host: 'https://10.0.0.5:2376', certPath })); // 'the container engine at https://10.0.0.5:2376 (TCP with TLS)'
 * describeEngine(connectEngine({ host: 'ssh://deploy@box' }));                // 'the container engine at ssh://deploy@box:22 (over SSH)'
 * describeEngine(connectEngine({ podman: true }));                             // 'the Podman engine at unix:///run/user/1000/podman/podman.sock'
 * ```
 */
export function describeEngine(docker: Docker): string {
  const engine = `the ${engineTitle(knownNames.get(docker))} engine`;
  const ssh = sshTransports.get(docker);
  if (ssh !== undefined) return `${engine} at ${ssh.address} (over SSH)`;
  const m = docker.modem as unknown as { socketPath?: unknown; host?: unknown; port?: unknown; protocol?: unknown };
  if (typeof m.socketPath === 'string' && m.socketPath !== '') return `${engine} at unix://${m.socketPath}`;
  if (typeof m.host === 'string') {
    const tls = m.protocol === 'https';
    return `${engine} at ${tls ? 'https' : 'http'}://${m.host}:${String(m.port ?? '')} (${tls ? 'TCP with TLS' : 'plain TCP, no TLS'})`;
  }
  return `${engine} at the client's default address`;
}
