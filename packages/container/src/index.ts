/**
 * `@ctxfs/container` — a ctxfs workspace inside a Docker container, reached
 * through the Docker Engine API only (local socket or remote engine).
 *
 * @example
 * ```ts
 * import { ContainerFilesystem } from '@ctxfs/container';
 * await using fs = await ContainerFilesystem.open({ container: 'sandbox', workdir: '/work' });
 * for await (const m of fs.grep('TODO')) console.log(`${m.path}:${m.line}: ${m.text}`);
 * ```
 *
 * @module
 */

export { type ContainerCondition, ContainerUnavailableError, containerUnavailability, resumeCommand, type Unavailability } from './container-errors.ts';
export { ContainerFilesystem, type ContainerFilesystemOptions, containerCapabilities, DEFAULT_WATCH_POLL_INTERVAL_MS } from './container-filesystem.ts';
export {
  closeEngine,
  connectEngine,
  defaultSocketPath,
  type EngineAddress,
  type EngineName,
  type EngineOptions,
  engineName,
  engineNameOf,
  resolveEngine,
  type SshOptions,
  type TlsMaterial,
} from './engine.ts';
export { DEFAULT_REQUEST_TIMEOUT_MS } from './helper-session.ts';
export { shellQuote } from './shell-quote.ts';
export { SshIdentity, type SshTarget } from './ssh-transport.ts';
