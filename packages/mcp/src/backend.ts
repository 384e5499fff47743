/**
 * Which filesystem the server serves, from one option string: a host
 * directory (the default), memory (empty or seeded from a directory), an
 * existing container (`docker:<name>`) or a new one from an image
 * (`image:<ref>`).
 *
 * @module
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { Filesystem } from '@ctxfs/core';

/** A backend, as the options name it. */
export type BackendSpec =
  | { readonly kind: 'host'; readonly root: string }
  /** A host directory named by the first client's roots (the current directory when it names none). */
  | { readonly kind: 'client-root' }
  | { readonly kind: 'memory'; readonly seed?: string | undefined }
  | { readonly kind: 'container'; readonly container: string; readonly workdir?: string | undefined }
  | { readonly kind: 'image'; readonly image: string; readonly workdir?: string | undefined };

/**
 * Reads `--backend`: `host` (with `root`), `memory` (seeded from `root` when
 * given), `docker:<container>`, `image:<ref>`.
 *
 * @example
 * ```ts
 * parseBackend('docker:dev', undefined); // { kind: 'container', container: 'dev' }
 * parseBackend(undefined, '/repo');      // { kind: 'host', root: '/repo' }
 * parseBackend(undefined, undefined);    // { kind: 'client-root' }: the client's first root
 * ```
 */
export function parseBackend(option: string | undefined, root: string | undefined, workdir?: string): BackendSpec {
  const value = option ?? 'host';
  if (value === 'host') return root === undefined ? { kind: 'client-root' } : { kind: 'host', root: resolve(root) };
  if (value === 'memory') return { kind: 'memory', seed: root === undefined ? undefined : resolve(root) };
  if (value.startsWith('docker:') && value.length > 'docker:'.length) return { kind: 'container', container: value.slice('docker:'.length), workdir };
  if (value.startsWith('image:') && value.length > 'image:'.length) return { kind: 'image', image: value.slice('image:'.length), workdir };
  throw new Error(`--backend ${value}: expected host, memory, docker:<container> or image:<ref>.`);
}

// Version-control internals are never content a model edits.
const SKIP = new Set(['.git', '.hg', '.svn']);

async function seedFiles(dir: string): Promise<Record<string, Uint8Array>> {
  // Loaded with the backend it serves, not with the server's first answer.
  const { isAddressableName } = await import('@ctxfs/core');
  const files: Record<string, Uint8Array> = {};
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      // A name no workspace path can spell (a newline, a backslash, bytes that are not UTF-8) is left out, as the host's walk leaves it.
      if (SKIP.has(entry.name) || !isAddressableName(entry.name)) continue;
      const full = join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files[relative(dir, full).split(sep).join('/')] = readFileSync(full);
    }
  };
  if (!statSync(dir).isDirectory()) throw new Error(`--root ${dir}: the seed of a memory workspace must be a directory`);
  walk(dir);
  return files;
}

/**
 * Opens the filesystem a spec names. Each backend is loaded when it is
 * named: the server answers its first request before any of them is.
 */
export async function openBackend(spec: Exclude<BackendSpec, { kind: 'client-root' }>): Promise<Filesystem> {
  switch (spec.kind) {
    case 'host': {
      const { HostFilesystem } = await import('@ctxfs/host');
      return new HostFilesystem({ root: spec.root });
    }
    case 'memory': {
      const { MemoryFilesystem } = await import('@ctxfs/memory');
      return new MemoryFilesystem({ files: spec.seed === undefined ? {} : await seedFiles(spec.seed) });
    }
    case 'container':
    case 'image': {
      const { ContainerFilesystem } = await import('@ctxfs/container');
      if (spec.kind === 'image') return ContainerFilesystem.open({ image: spec.image, workdir: spec.workdir });
      // An attached container outlives the command: so do its snapshots, kept where its state is.
      const { userStateDir } = await import('@ctxfs/context/guard');
      return ContainerFilesystem.open({ container: spec.container, workdir: spec.workdir, snapshotDir: (root) => join(userStateDir(root), 'snapshots') });
    }
  }
}

/** What the backend is, in a few words for logs and the server's instructions. */
export function describeBackend(spec: BackendSpec): string {
  switch (spec.kind) {
    case 'host':
      return `the directory ${spec.root}`;
    case 'client-root':
      return "the client's root directory";
    case 'memory':
      return spec.seed === undefined ? 'an empty in-memory workspace' : `an in-memory copy of ${spec.seed}`;
    case 'container':
      return `container ${spec.container}`;
    case 'image':
      return `a new container from ${spec.image}`;
  }
}
