/**
 * Where a workspace's state lives and how a store is opened from one setting:
 * a file path (or `':memory:'`) opens SQLite, a `postgres://` URL opens
 * PostgreSQL.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { fsError, isHostPathInside, realpathOfNearest } from '@ctxfs/core';
import { SqliteStateStore, type SqliteStoreOptions } from './sqlite-store.ts';
import type { StateStore } from './state-store.ts';

/** Options of {@link openStateStore}. */
export interface OpenStateOptions {
  /** How long a SQLite writer waits for another process's lock; default 5,000 ms. */
  busyTimeoutMs?: number;
  /** A SQLite store's {@link SqliteStoreOptions.checkpointOnClose}: `false` for a process that exits right after closing it. */
  checkpointOnClose?: boolean;
  /**
   * The workspace the store belongs to. A PostgreSQL database holds many
   * workspaces, one schema each, named from this unless the URL names one
   * (`?schema=…`). A host workspace (an absolute path) never holds its own
   * SQLite store: a file inside it is refused with `EINVAL`.
   */
  workspace?: string;
}

/** Whether `location` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * The URL with its password removed (from the user part and from a `password` parameter).
 *
 * @example
 * ```ts
 * withoutPassword('postgres://app:secret@db/ctxfs?sslmode=require'); // 'postgres://app@db/ctxfs?sslmode=require'
 * ```
 */
export function withoutPassword(url: string): string {
  // Taken out as text, so the rest of the URL reads as it was written.
  return url
    .replace(/^([a-z]+:\/\/[^:@/?#]*):[^@/?#]*@/i, '$1@')
    .replace(/([?&])password=[^&#]*&?/gi, '$1')
    .replace(/[?&]$/, '');
}

/**
 * Opens the state store `location` names: a SQLite file path, `':memory:'`,
 * or a `postgres://` / `postgresql://` URL.
 *
 * @example
 * ```ts
 * const local = await openStateStore('/home/me/.project.ctxfs/state.db');
 * const shared = await openStateStore('postgres://ctxfs@db.internal/ctxfs', { workspace: '/srv/project' });
 * ```
 */
export async function openStateStore(location: string, options: OpenStateOptions = {}): Promise<StateStore> {
  if (isPostgresUrl(location)) {
    const { PostgresStateStore } = await import('./postgres-store.ts');
    return PostgresStateStore.open({ url: location, ...(options.workspace === undefined ? {} : { workspace: options.workspace }) });
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw fsError('EINVAL', 'openState', location, {
      reason: 'not a state store location: expected a file path, `:memory:`, or a postgres:// URL',
      hint: 'pass a SQLite file path or a postgres://user@host/db URL',
    });
  }
  if (location !== ':memory:' && options.workspace !== undefined && isAbsolute(options.workspace)) {
    // Where a host workspace is a directory of this machine: its state inside it would be the model's to read,
    // change and delete (a snapshot restore deleted the open database and the audit trail beside it).
    const root = realpathOfNearest(options.workspace);
    if (isHostPathInside(root, realpathOfNearest(location))) {
      throw fsError('EINVAL', 'openState', location, {
        reason: `the state store ${location} is inside the workspace ${options.workspace}`,
        hint: `keep it outside the workspace: the default is beside it (${defaultStatePath(root)})`,
      });
    }
  }
  return SqliteStateStore.open({
    path: location,
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    ...(options.checkpointOnClose === undefined ? {} : { checkpointOnClose: options.checkpointOnClose }),
  });
}

/**
 * Where the store of a workspace lives by default: in a directory beside the
 * workspace (`<parent>/.<name>.ctxfs/state.db`), so it never shows up in the
 * workspace's own list, glob or grep results. Workspaces that are not host
 * directories (memory, containers) get `':memory:'`.
 *
 * @example
 * ```ts
 * defaultStatePath('/home/me/project'); // '/home/me/.project.ctxfs/state.db'
 * defaultStatePath('memory:');          // ':memory:'
 * ```
 */
export function defaultStatePath(workspaceRoot: string): string {
  if (!isAbsolute(workspaceRoot)) return ':memory:';
  const name = basename(workspaceRoot) || createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 12);
  return join(dirname(workspaceRoot), `.${name}.ctxfs`, 'state.db');
}

/**
 * The user's state directory of a workspace:
 * `$XDG_STATE_HOME/ctxfs/<hash of root>` (else `~/.local/state/ctxfs/…`).
 * What a workspace that is not a host directory keeps on this machine lives
 * there: its state store, its container snapshots.
 *
 * @example
 * ```ts
 * userStateDir('docker://dev/work'); // '/home/me/.local/state/ctxfs/3b1f…'
 * ```
 */
export function userStateDir(workspaceRoot: string): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'ctxfs', createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 16));
}

/**
 * The fallback location when the directory beside the workspace is not
 * writable, and the store of a workspace that is not a host directory:
 * `context.db` in {@link userStateDir}.
 */
export function userStatePath(workspaceRoot: string): string {
  return join(userStateDir(workspaceRoot), 'context.db');
}
