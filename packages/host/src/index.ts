/**
 * `@ctxfs/host` — the host-disk backend: a workspace directory with a root
 * wall, atomic writes, format-keeping text, locks, ripgrep and git snapshots.
 *
 * @example
 * ```ts
 * import { HostFilesystem } from '@ctxfs/host';
 * await using fs = await HostFilesystem.open({ root: '/path/to/repo' });
 * for await (const m of fs.grep('TODO', { glob: '**\/*.ts' })) console.log(m.path, m.line);
 * ```
 *
 * @module
 */

export { cleanOrphans, type Durability, isTempName, TEMP_PREFIX } from './atomic-write.ts';
export { GitSnapshotStore, type GitSnapshotStoreOptions } from './git-snapshots.ts';
export { HostFilesystem, type HostFilesystemOptions } from './host-filesystem.ts';
export { jschardetDetector } from './legacy-detection.ts';
export { LockManager, type LockOptions } from './locks.ts';
export { findRipgrep } from './ripgrep.ts';
export { RootGuard, type SymlinkPolicy } from './root-guard.ts';
export type { TextWriteOptions } from './text-format.ts';
