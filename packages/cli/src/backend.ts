/**
 * Which filesystem a command works on: `--backend` (or `CTXFS_BACKEND`) read
 * into the MCP server's `BackendSpec`, so `ctxfs serve` hands it on as is,
 * and opened when a command needs it. The host backend is opened here, with
 * nothing else loaded, because `ctxfs cat --raw` must start fast; the others
 * go through the MCP package's `openBackend`.
 *
 * @module
 */

import { isAbsolute, resolve } from 'node:path';
import { type Filesystem, isFsError } from '@ctxfs/core';
import type { BackendSpec } from '@ctxfs/mcp';
import { CliError, EXIT } from './exit-codes.ts';

/** A backend the CLI can open (the MCP server's spec less `client-root`). */
export type CliBackend = Exclude<BackendSpec, { kind: 'client-root' }>;

/**
 * Reads `--backend`: `host` (the default, on `root`), `memory` (a copy of
 * `root` in memory: nothing a command changes is kept), `docker:<container>`,
 * `docker-image:<image>` (a new container; `image:<image>` as the MCP server
 * spells it works too).
 *
 * @example
 * ```ts
 * parseBackendOption('docker:dev', '/repo');            // { kind: 'container', container: 'dev', workdir: undefined }
 * parseBackendOption(undefined, '/repo');               // { kind: 'host', root: '/repo' }
 * parseBackendOption('docker-image:busybox', '/repo', '/work'); // { kind: 'image', image: 'busybox', workdir: '/work' }
 * ```
 */
export function parseBackendOption(value: string | undefined, root: string, workdir?: string): CliBackend {
  const v = value ?? 'host';
  // Checked before any container is made: the engine would make one for an image and then refuse the path.
  if (workdir !== undefined && !isAbsolute(workdir)) throw new CliError('EINVAL', `--workdir ${workdir}: the workspace inside a container is an absolute path`);
  const after = (prefix: string): string | undefined => (v.startsWith(prefix) && v.length > prefix.length ? v.slice(prefix.length) : undefined);
  if (v === 'host') return { kind: 'host', root: resolve(root) };
  if (v === 'memory') return { kind: 'memory', seed: resolve(root) };
  const container = after('docker:');
  if (container !== undefined) return { kind: 'container', container, workdir };
  const image = after('docker-image:') ?? after('image:');
  if (image !== undefined) return { kind: 'image', image, workdir };
  throw new CliError('EINVAL', `--backend ${v}: expected host, memory, docker:<container> or docker-image:<image>`);
}

/** The backend in a few words. */
export function describe(spec: CliBackend): string {
  switch (spec.kind) {
    case 'host':
      return `host ${spec.root}`;
    case 'memory':
      return `memory (a copy of ${spec.seed})`;
    case 'container':
      return `docker:${spec.container}`;
    case 'image':
      return `docker-image:${spec.image}`;
  }
}

/**
 * Opens the filesystem of `spec`. Any failure to reach it — no such
 * directory, container or engine — is `EUNAVAILABLE` (exit 5), with the
 * backend's own message; an option the backend refuses is `EINVAL` (exit 2).
 */
export async function openFilesystem(spec: CliBackend): Promise<Filesystem> {
  try {
    if (spec.kind === 'host') {
      const { HostFilesystem } = await import('@ctxfs/host');
      return new HostFilesystem({ root: spec.root });
    }
    const { openBackend } = await import('@ctxfs/mcp');
    return await openBackend(spec);
  } catch (err) {
    const e = err as Error & { code?: string; hint?: string };
    // A backend's FsError message already holds its code, operation and hint, which the CLI's error shows again.
    const why = isFsError(err) ? err.reason : e.message;
    // A bad option (a relative --workdir) is the caller's to fix, not the backend's.
    if (e.code === 'EINVAL') throw new CliError('EINVAL', `cannot open ${describe(spec)}: ${why}`, e.hint);
    throw new CliError('EUNAVAILABLE', `cannot open ${describe(spec)}: ${why}`, e.hint ?? 'check --backend and --root', EXIT.unavailable);
  }
}
