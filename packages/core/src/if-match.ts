/**
 * Compare-and-swap writes: the meaning of `ifMatch`, defined once. A backend
 * computes the file's current hash at commit, under whatever makes its commit
 * atomic, and hands it to {@link assertIfMatch}; validation and the conflict
 * error are the same on every backend.
 *
 * @module
 */

import { hash } from 'node:crypto';
import { type FsOperation, fsError } from './errors.ts';

/** `ifMatch` value meaning "the file must not exist". */
export const IF_ABSENT = 'absent';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Lowercase hex SHA-256 of `bytes`, the form `ifMatch` and `digest` use. */
export function sha256Hex(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex');
}

/** Throws EINVAL unless `ifMatch` is undefined, `'absent'` or a lowercase hex SHA-256. */
export function validateIfMatch(ifMatch: unknown, op: FsOperation, path: string): asserts ifMatch is string | undefined {
  if (ifMatch === undefined || ifMatch === IF_ABSENT) return;
  if (typeof ifMatch === 'string' && SHA256_HEX.test(ifMatch)) return;
  throw fsError('EINVAL', op, path, {
    reason: `ifMatch must be a lowercase hex SHA-256 (64 characters) or 'absent', not ${JSON.stringify(ifMatch)}`,
    hint: "pass the sha256 a read or digest reported, or 'absent' for a file that must not exist yet",
  });
}

/**
 * Throws ECONFLICT when the file's current state (`current`: its SHA-256, or
 * undefined when it does not exist) is not the one `ifMatch` expects. The
 * reason names both hashes so the caller can tell what it is looking at.
 */
export function assertIfMatch(ifMatch: string | undefined, current: string | undefined, op: FsOperation, path: string): void {
  if (ifMatch === undefined) return;
  const now = current ?? IF_ABSENT;
  if (now === ifMatch) return;
  const what = current === undefined ? 'it does not exist' : `its content is ${current}`;
  throw fsError('ECONFLICT', op, path, {
    reason: `the file changed: ${what} (expected ${ifMatch === IF_ABSENT ? 'no file' : ifMatch})`,
    hint: 'read it again, redo the change on the current content, and write with the new hash',
  });
}
