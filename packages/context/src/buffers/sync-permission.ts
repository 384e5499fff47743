/**
 * How a buffer and the file on disk stay in step, by the agent's permission
 * on the file (seed 003): which way changes flow and who wins where both
 * sides changed the same text.
 *
 * @module
 */

/**
 * - `read-only`: disk → buffer only; the agent cannot edit or save.
 * - `read-write`: both ways; where both changed the same text, the disk wins.
 * - `admin`: both ways; where both changed the same text, the agent wins.
 * - `human` / `partner`: both ways; a collision is shown to the agent
 *   (status `conflict`) and waits for its decision — never resolved silently.
 */
export type SyncPermission = 'read-only' | 'read-write' | 'admin' | 'human' | 'partner';

/** Every permission, for validation and schemas. */
export const SYNC_PERMISSIONS: readonly SyncPermission[] = ['read-only', 'read-write', 'admin', 'human', 'partner'];

/** Which side a collision goes to: decided by the permission, or left to the agent. */
export type CollisionRule = 'disk' | 'buffer' | 'ask';

/**
 * The rule for text both sides changed.
 *
 * @example
 * ```ts
 * collisionRule('admin'); // 'buffer'
 * ```
 */
export function collisionRule(permission: SyncPermission): CollisionRule {
  switch (permission) {
    case 'read-only':
    case 'read-write':
      return 'disk';
    case 'admin':
      return 'buffer';
    default:
      return 'ask';
  }
}

/** Whether the agent may change the buffer and write it back. */
export function canWriteBack(permission: SyncPermission): boolean {
  return permission !== 'read-only';
}
