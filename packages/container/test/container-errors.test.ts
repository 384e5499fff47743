/**
 * The mapping of what tools in the container print onto error codes, for
 * the cases the engine suites cannot force: `df` output that cannot be read
 * must leave the caller's own error in place rather than invent a full disk.
 */

import { describe, expect, it } from 'vitest';
import { codeFromMessage, FULL_DISK_BYTES, freeKibibytes, helperFailure } from '../src/container-errors.ts';

describe('freeKibibytes', () => {
  it('reads the Available column of busybox and GNU `df -Pk`', () => {
    const busybox = 'Filesystem           1024-blocks    Used Available Capacity Mounted on\ntmpfs                     1024      1024         0 100% /work\n';
    const gnu = 'Filesystem     1024-blocks     Used Available Capacity Mounted on\n/dev/sda1         61255492 21933764  36180404      38% /\n';
    expect(freeKibibytes(busybox)).toBe(0);
    expect(freeKibibytes(gnu)).toBe(36180404);
  });

  it('reads a row wrapped after a long device name', () => {
    const wrapped = 'Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/mapper/a-very-long-volume-group-name-root\n  1024 960 64 94% /work\n';
    expect(freeKibibytes(wrapped)).toBe(64);
    expect(64 * 1024).toBeGreaterThanOrEqual(FULL_DISK_BYTES);
  });

  it('is undefined for output that is not a df row', () => {
    expect(freeKibibytes('')).toBeUndefined();
    expect(freeKibibytes("df: /work/missing: can't find mount point\n")).toBeUndefined();
    expect(freeKibibytes('Filesystem 1024-blocks Used Available Capacity Mounted on\n')).toBeUndefined();
  });
});

describe('helperFailure', () => {
  it('names the code the message gives, and says EIO with the message when there is none', () => {
    expect(codeFromMessage('cat: write error: No space left on device')).toBe('ENOSPC');
    const lost = helperFailure(1, '', 'write', 'keep.txt');
    expect(lost).toMatchObject({ code: 'EIO' });
    expect(lost.message).toContain('no message');
  });
});
