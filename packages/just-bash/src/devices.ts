/**
 * The device paths a script may name — `/dev/null` above all (`2>/dev/null`,
 * `> /dev/null`, `< /dev/null`) — as devices of the adapter, never files of
 * the workspace: the script's `/` is the workspace root, so without them
 * `2>/dev/null` made a file `dev/null` there, recorded as an edit.
 *
 * Only these absolute paths are devices; `/dev` itself and anything else
 * under it (`/dev/notes.txt`, `dev/x` from the root) stay the workspace's.
 * A workspace file `dev/null` is hidden behind the device.
 *
 * @module
 */

import type { FsStat } from 'just-bash';
import { BashFsError } from './bash-errors.ts';
import { virtualPath } from './virtual-path.ts';

/** What a device does with a read and a write. */
export interface Device {
  /** Its path, as the script names it. */
  readonly path: string;
  /** `empty`: nothing to read (`/dev/null`); `endless`: an endless stream, refused (just-bash reads a file whole); `stream`: the script's own standard streams or terminal, which a filesystem cannot reach. */
  readonly read: 'empty' | 'endless' | 'stream';
  /** `discard`: taken and dropped; `full`: refused as out of space (`/dev/full`); `stream`: as for reads. */
  readonly write: 'discard' | 'full' | 'stream';
  /** Why a `stream` device is refused, and what to write instead. */
  readonly why?: string;
}

const STREAM_WRITE =
  'just-bash connects it in a redirection only (`> /dev/stdout`, `2> /dev/stderr`); a command that opens it by name cannot reach the output: redirect instead (`>&2`)';

/** The devices, by path. */
export const DEVICES: ReadonlyMap<string, Device> = new Map(
  (
    [
      { path: '/dev/null', read: 'empty', write: 'discard' },
      { path: '/dev/zero', read: 'endless', write: 'discard' },
      { path: '/dev/full', read: 'endless', write: 'full' },
      { path: '/dev/random', read: 'endless', write: 'discard' },
      { path: '/dev/urandom', read: 'endless', write: 'discard' },
      {
        path: '/dev/stdin',
        read: 'stream',
        write: 'stream',
        why: 'just-bash gives a command its standard input, not the filesystem: read `-` (`cat -`) or use a redirection',
      },
      { path: '/dev/stdout', read: 'stream', write: 'stream', why: STREAM_WRITE },
      { path: '/dev/stderr', read: 'stream', write: 'stream', why: STREAM_WRITE },
      { path: '/dev/tty', read: 'stream', write: 'stream', why: 'a script has no terminal' },
    ] satisfies Device[]
  ).map((d) => [d.path, d]),
);

/**
 * just-bash's own descriptors (`<(cmd)` is `/dev/fd/63`): refused here, so
 * just-bash mounts its in-memory `/dev/fd` over this filesystem, as it does
 * over any filesystem that refuses the write.
 */
const FD_DIR = '/dev/fd';

/** A path that is, or is under, a device. */
export type DeviceAt =
  /** The device itself; `slashed` when named as a directory (`/dev/null/`). */
  | { readonly at: 'device'; readonly device: Device; readonly slashed: boolean }
  /** Below a device (`/dev/null/x`): `ENOTDIR`. */
  | { readonly at: 'below'; readonly device: Device }
  /** just-bash's `/dev/fd`, or below it: not here. */
  | { readonly at: 'fd' };

/**
 * The device `path` names, if any (`undefined` for a workspace path).
 *
 * @example
 * ```ts
 * deviceAt('/dev/../dev/null', 'open'); // { at: 'device', device: { path: '/dev/null', … }, slashed: false }
 * deviceAt('/dev/notes.txt', 'open'); // undefined: the workspace's dev/notes.txt
 * ```
 */
export function deviceAt(path: string, syscall: string): DeviceAt | undefined {
  // A NUL is refused by the call itself, in just-bash's words.
  if (path.includes('\0')) return undefined;
  const v = virtualPath(path, syscall);
  if (!v.startsWith('/dev/')) return undefined;
  if (v === FD_DIR || v.startsWith(`${FD_DIR}/`)) return { at: 'fd' };
  const device = DEVICES.get(v);
  if (device !== undefined) return { at: 'device', device, slashed: /\/\.?$/.test(path) };
  const second = v.indexOf('/', '/dev/'.length);
  const parent = second < 0 ? undefined : DEVICES.get(v.slice(0, second));
  return parent === undefined ? undefined : { at: 'below', device: parent };
}

/** When the devices "came up": their modification time, as a booted system's. */
const BOOT = new Date();

/** A device's stat: neither a file nor a directory (`[ -f ]` is false), readable and writable by all, empty. */
export function deviceStat(device: Device): FsStat {
  return {
    isFile: false,
    isDirectory: false,
    isSymbolicLink: false,
    // Permission bits only, as just-bash's own filesystems keep them (its `stat` prints them as `0666`); its `[ -c ]` knows the device paths by name.
    mode: 0o666,
    size: 0,
    mtime: BOOT,
    identity: `ctxfs-device:${device.path}`,
  };
}

/**
 * The device, or the refusal of a path that is under one or in just-bash's
 * `/dev/fd` (`fdCode`: what the call says of a path that is not there).
 */
export function deviceOrRefuse(at: DeviceAt, syscall: string, path: string, fdCode: 'ENOENT' | 'EROFS' = 'ENOENT'): Device {
  const v = virtualPath(path, syscall);
  if (at.at === 'fd') throw new BashFsError(fdCode, syscall, v);
  if (at.at === 'below' || at.slashed) throw new BashFsError('ENOTDIR', syscall, v);
  return at.device;
}

/** What a read of `device` gives: nothing for `/dev/null`, a refusal for the rest, saying why. */
export function deviceRead(device: Device, syscall: string): Uint8Array {
  if (device.read === 'empty') return new Uint8Array(0);
  if (device.read === 'endless')
    throw new BashFsError('EFBIG', syscall, device.path, 'an endless device, and just-bash reads a file whole: it cannot be read here');
  throw new BashFsError('ENXIO', syscall, device.path, device.why);
}

/** A write to `device`: dropped for `/dev/null` and its kind, refused for the rest. */
export function deviceWrite(device: Device, syscall: string): void {
  if (device.write === 'discard') return;
  if (device.write === 'full') throw new BashFsError('ENOSPC', syscall, device.path);
  throw new BashFsError('ENXIO', syscall, device.path, device.why);
}
