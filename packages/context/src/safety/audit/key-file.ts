/**
 * The file that holds the audit chain's key. It lives outside the workspace
 * and outside the log directory (by default in the user's state directory),
 * created 0600 on first use: whoever can rewrite the log but cannot read the
 * key cannot produce records that verify.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsError } from '@ctxfs/core';

/** Bytes of a generated key. */
export const KEY_BYTES = 32;

/**
 * Loads the key file, or creates it (32 random bytes as hex, mode 0600, its
 * directory 0700) when it does not exist. A key file that others can read is
 * refused, as ssh refuses such a private key: a key anyone can read protects
 * nothing.
 *
 * @example
 * ```ts
 * const key = loadOrCreateKey(join(userStateDir, 'audit.key'));
 * ```
 */
export function loadOrCreateKey(keyFile: string): Uint8Array {
  // Every command after the first finds the key: read it before paying for a new one (random bytes, an fsync,
  // a link and an unlink, about 2 ms of each start).
  const existing = readKey(keyFile, true);
  if (existing !== undefined) return existing;
  mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  // Written whole under a name of its own, then linked to the key's name: link(2) fails when the name exists, so
  // of two processes starting at once one key wins, and neither can read the other's half-written file (creating
  // the key file in place let a second process read it empty).
  const draft = `${keyFile}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  let fd: number;
  try {
    fd = openSync(draft, 'wx', 0o600);
  } catch (err) {
    throw keyError(keyFile, err);
  }
  try {
    writeSync(fd, `${key.toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(draft, keyFile);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw keyError(keyFile, err);
    return readKey(keyFile, false) as Uint8Array;
  } finally {
    unlinkSync(draft);
  }
}

/** The key in `keyFile`; `undefined` when there is none yet and `missingOk`. */
function readKey(keyFile: string, missingOk: boolean): Uint8Array | undefined {
  let fd: number;
  try {
    fd = openSync(keyFile, 'r');
  } catch (err) {
    if (missingOk && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw keyError(keyFile, err);
  }
  try {
    const st = fstatSync(fd);
    if ((st.mode & 0o077) !== 0) {
      throw fsError('EPERM', 'audit', undefined, {
        reason: `the audit key ${keyFile} can be read by others (mode ${(st.mode & 0o777).toString(8)})`,
        hint: `chmod 600 ${keyFile}`,
      });
    }
    const text = readFileSync(fd, 'utf8').trim();
    // Only a damaged or hand-edited file: the key is linked into place whole.
    if (!/^[0-9a-f]{32,}$/i.test(text) || text.length % 2 !== 0) {
      throw fsError('EINVAL', 'audit', undefined, {
        reason: `the audit key ${keyFile} is not a hex key`,
        hint: 'restore the key file from a backup; a new key cannot verify the existing log (see AUDIT.md, "Reset")',
      });
    }
    return Buffer.from(text, 'hex');
  } finally {
    closeSync(fd);
  }
}

function keyError(keyFile: string, err: unknown): Error {
  return fsError('EIO', 'audit', undefined, {
    reason: `cannot open the audit key ${keyFile}: ${(err as Error).message}`,
    hint: 'the key file must be in a writable directory outside the workspace',
    cause: err,
  });
}
