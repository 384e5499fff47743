/**
 * The engine connection: where the Docker Engine API is (a Unix socket, TCP
 * with or without TLS, Podman's API service) and with which certificates,
 * from explicit options or from the environment exactly as the docker CLI
 * reads it (`DOCKER_HOST`, `DOCKER_TLS_VERIFY`, `DOCKER_CERT_PATH`).
 *
 * @module
 */

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { FsError } from '@ctxfs/core';
import Docker from 'dockerode';

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
   * A remote engine: `tcp://host:port`, `unix:///path` or a bare host name,
   * as `DOCKER_HOST` takes it. TLS is used when `protocol` is `https`,
   * `tlsVerify` is set or any certificate option is given.
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
  | { readonly kind: 'ssh'; readonly host: string; readonly port: number; readonly username?: string };

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

function tcpOrSsh(url: URL, tls: TlsMaterial | undefined, explicitPort: number | string | undefined, source: string): EngineAddress {
  const portText = url.port || (explicitPort === undefined ? '' : String(explicitPort));
  if (url.protocol === 'ssh:') {
    return { kind: 'ssh', host: url.hostname, port: portText === '' ? 22 : Number(portText), username: url.username || undefined };
  }
  if (url.protocol !== 'tcp:' && url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`${source} '${url.href}' uses an unknown scheme`, 'use unix://, tcp:// or ssh://');
  }
  const port = portText === '' ? (tls ? 2376 : 2375) : Number(portText);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw invalid(`${source} '${url.href}' has no valid port`, 'give a port between 1 and 65535');
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
 * and `DOCKER_CERT_PATH` (default `~/.docker`). Missing certificate files
 * and malformed addresses are `EINVAL` with what to fix.
 *
 * @example
 * ```ts
 * resolveEngine({ env: { DOCKER_HOST: 'tcp://10.0.0.5:2376', DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/certs' } });
 * // { kind: 'tcp', host: '10.0.0.5', port: 2376, tls: { ca, cert, key } }
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
    const u = options.protocol === 'ssh' ? new URL(`ssh://${url.host}`) : url;
    return tcpOrSsh(u, tls, options.port, 'engine host');
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
  return tcpOrSsh(url, tls, undefined, 'DOCKER_HOST');
}

/**
 * Builds the dockerode client for {@link resolveEngine}'s address. Every
 * connection setting is passed explicitly, so variables the address did not
 * come from (a `DOCKER_HOST` beside an explicit socket) cannot leak in.
 *
 * @example
 * ```ts
 * const docker = connectEngine({ host: 'tcp://build-box:2376', certPath: '/etc/docker/certs' });
 * const podman = connectEngine({ podman: true });
 * ```
 */
export function connectEngine(options: EngineOptions = {}): Docker {
  if (options.docker) return options.docker;
  const address = resolveEngine(options);
  const none = { socketPath: undefined, host: undefined, port: undefined, ca: undefined, cert: undefined, key: undefined, protocol: undefined };
  const timeout = options.timeout;
  try {
    if (address.kind === 'unix') return new Docker({ ...none, socketPath: address.socketPath, timeout });
    if (address.kind === 'ssh') {
      return new Docker({ ...none, protocol: 'ssh', host: address.host, port: address.port, username: address.username, timeout });
    }
    const { tls } = address;
    return new Docker({ ...none, host: address.host, port: address.port, protocol: tls ? 'https' : 'http', timeout, ...tls });
  } catch (err) {
    // docker-modem reads DOCKER_HOST and DOCKER_CERT_PATH itself before our options override them.
    throw invalid(`the engine client could not be set up: ${(err as Error).message}`, 'check DOCKER_HOST and DOCKER_CERT_PATH', err);
  }
}

/** A human-readable description of where the engine is, for error messages. */
export function describeEngine(docker: Docker): string {
  const m = docker.modem as unknown as { socketPath?: unknown; host?: unknown; port?: unknown; protocol?: unknown };
  if (typeof m.socketPath === 'string' && m.socketPath !== '') return `unix://${m.socketPath}`;
  if (typeof m.host === 'string') return `${String(m.protocol ?? 'http')}://${m.host}:${String(m.port ?? '')}`;
  return 'the default Docker engine';
}
