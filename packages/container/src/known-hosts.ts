/**
 * OpenSSH `known_hosts` files, read the way `ssh` checks a server's host key:
 * plain and hashed (`|1|salt|hash`) host patterns, `[host]:port` for a port
 * other than 22, wildcards and negation, `@revoked` markers. Certificate
 * authorities (`@cert-authority`) are not supported and their lines are skipped.
 *
 * @module
 */

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** What the known_hosts files say about a host key. */
export type HostKeyCheck =
  | { readonly verdict: 'known' }
  /** No line names the host. */
  | { readonly verdict: 'unknown' }
  /** Lines name the host with other keys (of these types); where the first is. */
  | { readonly verdict: 'mismatch'; readonly where: string; readonly knownTypes: readonly string[] }
  /** An `@revoked` line lists this very key. */
  | { readonly verdict: 'revoked'; readonly where: string };

interface Entry {
  readonly where: string;
  readonly marker: '' | '@revoked';
  readonly patterns: string;
  readonly type: string;
  readonly blob: Buffer;
}

/**
 * The name `ssh` looks a server up by: the host alone on port 22, else
 * `[host]:port` (an IPv6 literal without its URL brackets).
 *
 * @example
 * ```ts
 * knownHostsName('build-box', 22); // 'build-box'
 * knownHostsName('127.0.0.1', 2222); // '[127.0.0.1]:2222'
 * ```
 */
export function knownHostsName(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return port === 22 ? bare : `[${bare}]:${port}`;
}

/**
 * The SHA-256 fingerprint of a public key blob as `ssh-keygen -l` prints it.
 *
 * @example
 * ```ts
 * fingerprint(blob); // 'SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU'
 * ```
 */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type a public key blob names (its first SSH string). */
export function blobType(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const n = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + n).toString('latin1');
}

function readEntries(files: readonly string[]): Entry[] {
  const entries: Entry[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // A default file that does not exist is an empty one, as for ssh; explicit files are checked when resolved.
      continue;
    }
    text.split('\n').forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const fields = line.split(/\s+/);
      let marker: Entry['marker'] = '';
      if (fields[0]?.startsWith('@')) {
        if (fields[0] !== '@revoked') return;
        marker = '@revoked';
        fields.shift();
      }
      const [patterns, type, key] = fields;
      if (patterns === undefined || type === undefined || key === undefined) return;
      entries.push({ where: `${file}:${i + 1}`, marker, patterns, type, blob: Buffer.from(key, 'base64') });
    });
  }
  return entries;
}

/** `*` and `?` wildcards over the whole name, case-insensitive, as OpenSSH's match_pattern. */
function wildcard(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i').test(name);
}

/** A hashed pattern `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`. */
function hashedMatch(pattern: string, name: string): boolean {
  const [, kind, salt, hash] = pattern.split('|');
  if (kind !== '1' || salt === undefined || hash === undefined) return false;
  const want = Buffer.from(hash, 'base64');
  const got = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Whether a line's host field names `name`: any positive pattern matches and no negated one does. */
function namesHost(patterns: string, name: string): boolean {
  if (patterns.startsWith('|')) return hashedMatch(patterns, name);
  let matched = false;
  for (const p of patterns.split(',')) {
    if (p.startsWith('!')) {
      if (wildcard(p.slice(1), name)) return false;
    } else if (wildcard(p, name)) matched = true;
  }
  return matched;
}

/**
 * Checks the host key a server presented (its public key blob) against the
 * known_hosts `files` (missing files read as empty) for `name` (see
 * {@link knownHostsName}).
 *
 * @example
 * ```ts
 * checkHostKey(['/home/me/.ssh/known_hosts'], '[10.0.0.5]:2222', blob); // { verdict: 'known' }
 * ```
 */
export function checkHostKey(files: readonly string[], name: string, blob: Buffer): HostKeyCheck {
  const lines = readEntries(files).filter((e) => namesHost(e.patterns, name));
  const revoked = lines.find((e) => e.marker === '@revoked' && e.blob.equals(blob));
  if (revoked) return { verdict: 'revoked', where: revoked.where };
  const keys = lines.filter((e) => e.marker === '');
  if (keys.some((e) => e.blob.equals(blob))) return { verdict: 'known' };
  const first = keys[0];
  if (first === undefined) return { verdict: 'unknown' };
  return { verdict: 'mismatch', where: first.where, knownTypes: [...new Set(keys.map((e) => e.type))] };
}

/**
 * Key types the files hold for `name`, so that a server with several host
 * keys is asked for one of those first (as `ssh` orders its algorithms).
 */
export function knownKeyTypes(files: readonly string[], name: string): string[] {
  const types = readEntries(files)
    .filter((e) => e.marker === '' && namesHost(e.patterns, name))
    .map((e) => e.type);
  return [...new Set(types)];
}
