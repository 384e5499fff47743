/**
 * The MAC that keys the audit chain. (The key file is `key-file.ts`; this
 * module imports nothing but `node:crypto`, so verification workers load
 * little.) The MAC is HMAC-SHA256 (RFC 2104), computed by hand over two
 * one-shot SHA-256 calls with the padded key blocks prepared once: the same
 * value `createHmac` gives, at about six times its speed, which is what lets
 * `verify()` check hundreds of thousands of records a second.
 *
 * @module
 */

import { hash } from 'node:crypto';

/** Shortest key accepted: 128 bits. */
export const MIN_KEY_BYTES = 16;
const BLOCK = 64; // SHA-256 block size, the HMAC key block

/**
 * A loaded chain key: MACs over byte ranges, and an id that names the key without revealing it.
 *
 * @example
 * ```ts
 * const key = new ChainKey(loadOrCreateKey(defaultAuditKeyFile()));
 * key.macHex(Buffer.from('{"seq":1,…'), 0, n); // 64 hex digits, equal to createHmac('sha256', key)…digest('hex')
 * ```
 */
export class ChainKey {
  /** First 16 hex digits of HMAC(key, "ctxfs-audit key id"): tells a wrong key from a damaged log. */
  readonly id: string;
  // inner: ipad block followed by the message, grown as needed; outer: opad block + inner digest.
  #inner: Buffer;
  readonly #outer: Buffer;

  constructor(key: Uint8Array) {
    if (key.byteLength < MIN_KEY_BYTES) throw new RangeError(`an audit key has at least ${MIN_KEY_BYTES} bytes`);
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
