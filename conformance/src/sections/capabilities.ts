/**
 * Capabilities and limits: what the backend declares to the suite is what
 * the instance reports, every capability is a boolean, and limits are sane.
 *
 * @module
 */

import type { Capabilities } from '@ctxfs/core';
import { expect, it } from 'vitest';
import type { SuiteContext } from '../context.ts';

/** Every capability the protocol defines; a backend must answer each. */
const CAPABILITY_KEYS: readonly (keyof Capabilities)[] = [
  'snapshots',
  'watch',
  'symlinks',
  'nativeGrep',
  'readOnly',
  'permissions',
  'birthtime',
  'snapshotsKeepEmptyDirs',
  'compareAndSwap',
  'watchRenames',
];

const LIMIT_KEYS = ['maxConvenienceBytes', 'chunkSize', 'maxGrepMatches', 'maxDepth', 'maxSegmentBytes', 'maxPathBytes'] as const;

export function capabilitiesSection(ctx: SuiteContext): void {
  it('fs.capabilities equals the capabilities the target declares', async () => {
    const fs = await ctx.make();
    expect({ ...fs.capabilities }).toEqual({ ...ctx.caps });
  });

  it.each(CAPABILITY_KEYS)('capability %s is present and boolean', async (key) => {
    const fs = await ctx.make();
    expect(typeof fs.capabilities[key]).toBe('boolean');
    expect(typeof ctx.caps[key]).toBe('boolean');
  });

  it('capabilities are the same on every instance', async () => {
    const one = await ctx.make();
    const two = await ctx.make({ files: { 'a.txt': 'a' } });
    expect({ ...two.capabilities }).toEqual({ ...one.capabilities });
  });

  it('watchRenames and watchPollIntervalMs are only declared with watch; a poll interval is a positive integer', () => {
    expect(ctx.caps.watchRenames && !ctx.caps.watch).toBe(false);
    const poll = ctx.caps.watchPollIntervalMs;
    if (poll !== undefined) {
      expect(ctx.caps.watch).toBe(true);
      expect(Number.isSafeInteger(poll) && poll > 0).toBe(true);
    }
  });

  it('snapshotsKeepEmptyDirs is only declared with snapshots', () => {
    expect(ctx.caps.snapshotsKeepEmptyDirs && !ctx.caps.snapshots).toBe(false);
  });

  it.each(LIMIT_KEYS)('limits.%s is a positive integer', async (key) => {
    const fs = await ctx.make();
    expect(Number.isSafeInteger(fs.limits[key])).toBe(true);
    expect(fs.limits[key]).toBeGreaterThan(0);
  });

  it('path limits pass real trees (at least 64 segments of 255 bytes, 4096-byte paths)', async () => {
    const fs = await ctx.make();
    expect(fs.limits.maxDepth).toBeGreaterThanOrEqual(64);
    expect(fs.limits.maxSegmentBytes).toBeGreaterThanOrEqual(255);
    expect(fs.limits.maxPathBytes).toBeGreaterThanOrEqual(4096);
  });

  it('root is a non-empty string', async () => {
    const fs = await ctx.make();
    expect(typeof fs.root).toBe('string');
    expect(fs.root.length).toBeGreaterThan(0);
  });

  it('a default instance is writable', async () => {
    const fs = await ctx.make();
    expect(fs.readOnly).toBe(false);
    expect(fs.capabilities.readOnly).toBe(false);
  });
}
