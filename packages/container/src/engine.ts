/**
 * The Docker Engine connection: from the usual environment (`DOCKER_HOST`,
 * `DOCKER_TLS_VERIFY`, `DOCKER_CERT_PATH`), a socket path, TCP with TLS, or a
 * ready dockerode instance.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';

/** How to reach the Docker engine. Everything optional: defaults follow the Docker CLI. */
export interface EngineOptions {
  /** A ready client; wins over every other option. */
  docker?: Docker;
  /** Unix socket (or Windows named pipe) of the engine, e.g. `/var/run/docker.sock`. */
  socketPath?: string;
  /** TCP host of a remote engine (`DOCKER_HOST=tcp://host:2376` does the same). */
  host?: string;
  port?: number | string;
  protocol?: 'http' | 'https' | 'ssh';
  /** TLS material (PEM text or buffers), as in `DOCKER_CERT_PATH/{ca,cert,key}.pem`. */
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Directory holding `ca.pem`, `cert.pem` and `key.pem`. */
  certPath?: string;
  /** API request timeout in ms (not applied to streams). */
  timeout?: number;
}

/**
 * Builds the dockerode client. Without options it reads `DOCKER_HOST` and the
 * TLS variables exactly like the Docker CLI (docker-modem does the parsing),
 * falling back to the local socket.
 *
 * @example
 * ```ts
 * const docker = connectEngine({ host: 'build-box', port: 2376, certPath: '/etc/docker/certs' });
 * ```
 */
export function connectEngine(options: EngineOptions = {}): Docker {
  if (options.docker) return options.docker;
  const tls: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer } = {};
  if (options.certPath) {
    tls.ca = readFileSync(join(options.certPath, 'ca.pem'));
    tls.cert = readFileSync(join(options.certPath, 'cert.pem'));
    tls.key = readFileSync(join(options.certPath, 'key.pem'));
  }
  if (options.ca) tls.ca = options.ca;
  if (options.cert) tls.cert = options.cert;
  if (options.key) tls.key = options.key;
  const hasTls = tls.ca !== undefined || tls.cert !== undefined;
  if (options.socketPath) return new Docker({ socketPath: options.socketPath, timeout: options.timeout });
  if (options.host) {
    return new Docker({
      host: options.host,
      port: options.port ?? (hasTls ? 2376 : 2375),
      protocol: options.protocol ?? (hasTls ? 'https' : 'http'),
      timeout: options.timeout,
      ...tls,
    });
  }
  return new Docker({ timeout: options.timeout, ...tls });
}

/** A human-readable description of where the engine is, for error messages. */
export function describeEngine(docker: Docker): string {
  const m = docker.modem as unknown as { socketPath?: unknown; host?: unknown; port?: unknown; protocol?: unknown };
  if (typeof m.socketPath === 'string' && m.socketPath !== '') return `unix://${m.socketPath}`;
  if (typeof m.host === 'string') return `${String(m.protocol ?? 'http')}://${m.host}:${String(m.port ?? '')}`;
  return 'the default Docker engine';
}
