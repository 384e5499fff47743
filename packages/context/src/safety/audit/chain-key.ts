/**
 * The secret that keys the audit chain, and the MAC computed with it.
 *
 * The key lives outside the workspace and outside the log directory (a file
 * in the user's state directory, created 0600 on first use): whoever can
 * rewrite the log but cannot read the key cannot produce records that
 * verify. The MAC is HMAC-SHA256 (RFC 2104), computed by hand over two
 * one-shot SHA-256 calls with the padded key blocks prepared once: the same
 * value `createHmac` gives, at about six times its speed, which is what lets
 * `verify()` check hundreds of thousands of records a second.
 *
 * @module
 */

import { hash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsError } from '@ctxfs/core';

/** Bytes of a generated key. */
export const KEY_BYTES = 32;
const BLOCK = 64; // SHA-256 block size, the HMAC key block

/** A loaded chain key: MACs over byte ranges, and an id that names the key without revealing it. */
export class ChainKey {
  /** First 16 hex digits of HMAC(key, "ctxfs-audit key id"): tells a wrong key from a damaged log. */
  readonly id: string;
  // inner: ipad block followed by the message, grown as needed; outer: opad block + inner digest.
  #inner: Buffer;
  readonly #outer: Buffer;

  constructor(key: Uint8Array) {
    if (key.byteLength < 16)
      throw fsError('EINVAL', 'audit', undefined, { reason: 'the audit key must be at least 16 bytes', hint: 'pass 32 random bytes or a keyFile' });
    // RFC 2104: a key longer than the block is hashed first.
    const k = key.byteLength > BLOCK ? hash('sha256', key, 'buffer') : Buffer.from(key);
    this.#inner = Buffer.alloc(BLOCK + 1024);
    this.#outer = Buffer.alloc(BLOCK + 32);
    for (let i = 0; i < BLOCK; i++) {
      const b = k[i] ?? 0;
      this.#inner[i] = b ^ 0x36;
      this.#outer[i] = b ^ 0x5c;
    }
    this.id = this.macHex(Buffer.from('ctxfs-audit key id'), 0, 18).slice(0, 16);
  }

  /** HMAC-SHA256 of `bytes[start, end)`, as 64 lowercase hex digits. */
  macHex(bytes: Buffer, start: number, end: number): string {
    const n = end - start;
    if (BLOCK + n > this.#inner.length) {
      const grown = Buffer.alloc(Math.max(BLOCK + n, this.#inner.length * 2));
      this.#inner.copy(grown, 0, 0, BLOCK);
      this.#inner = grown;
    }
    bytes.copy(this.#inner, BLOCK, start, end);
    const innerDigest = hash('sha256', this.#inner.subarray(0, BLOCK + n), 'buffer');
    this.#outer.set(innerDigest, BLOCK);
    return hash('sha256', this.#outer, 'hex');
  }
}

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
  mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    // 'wx': exclusive create, so two processes starting at once cannot each write a different key.
    fd = openSync(keyFile, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw keyError(keyFile, err);
    return readKey(keyFile);
  }
  try {
    const key = randomBytes(KEY_BYTES);
    writeSync(fd, `${key.toString('hex')}\n`);
    return key;
  } finally {
    closeSync(fd);
  }
}

function readKey(keyFile: string): Uint8Array {
  let fd: number;
  try {
    fd = openSync(keyFile, 'r');
  } catch (err) {
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
    // A writer that died between creating the file and writing the key leaves it empty.
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
