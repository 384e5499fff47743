/**
 * The base class's `readWithStat` for a backend that cannot answer from one
 * open (a stat, the bytes, a stat again, answered only when they agree), run
 * on the host with its own one-open answer taken away: the host has links,
 * real replacement by rename and real concurrency, so the same conformance
 * section the backends pass holds the default to the same promises.
 */

import nodePath from 'node:path';
import { Worker } from 'node:worker_threads';
import { describeFilesystemConformance } from '@ctxfs/conformance';
import { type FileRead, isFsError } from '@ctxfs/core';
import type { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, test } from 'vitest';
import { openSeeded, removeWorkspace } from './helpers.ts';

/** `fs` with the host's one-open answer shadowed by an own property: the base then takes its default path. */
function withBaseDefault(fs: HostFilesystem): HostFilesystem {
  Object.defineProperty(fs, 'readFileWithStat', { value: undefined });
  return fs;
}

const probe = await openSeeded({});
const capabilities = probe.capabilities;
await probe.close();
await removeWorkspace(probe);

describeFilesystemConformance(
  {
    name: "host with the base's stat-read-stat readWithStat",
    capabilities,
    async create({ files, dirs, links, readOnly }) {
      const fs = await openSeeded({ files, dirs, links, readOnly });
      return withBaseDefault(fs);
    },
    cleanup: removeWorkspace,
  },
  { only: ['read with stat'] },
);

/**
 * A file replaced by another process's rename, as an editor or a build
 * replaces it, at any instant of the read: another thread renames two
 * versions of different sizes over it as fast as it can, and no answer may
 * pair one version's stat with the other's bytes. (Within one thread the
 * conformance section's replacements can only land between whole calls.)
 */
describe('readWithStat while another thread replaces the file', () => {
  const A = 'a'.repeat(10);
  const B = 'b'.repeat(3000);
  let fs: HostFilesystem | undefined;
  afterEach(async () => {
    await fs?.close();
    await removeWorkspace(fs);
  });

  test.each([
    ['the host (one open)', (f: HostFilesystem) => f],
    ["the base's stat-read-stat", withBaseDefault],
  ] as const)('%s never mixes two versions', async (_label, variant) => {
    const opened = await openSeeded({ files: { 'f.txt': A } });
    fs = variant(opened);
    const file = nodePath.join(opened.root, 'f.txt');
    const replacer = new Worker(
      `const fs = require('node:fs'); const { workerData: w } = require('node:worker_threads');
       for (let i = 0; ; i++) {
         const tmp = w.file + '.next';
         fs.writeFileSync(tmp, i % 2 ? w.a : w.b);
         fs.renameSync(tmp, w.file);
       }`,
      { eval: true, workerData: { file, a: A, b: B } },
    );
    await new Promise((resolve) => replacer.once('online', resolve));
    let answered = 0;
    let busy = 0;
    const until = Date.now() + 400;
    try {
      while (Date.now() < until) {
        let r: FileRead;
        try {
          r = await fs.readWithStat('f.txt');
        } catch (err) {
          // The default may give up on a file replaced under each of its reads; that is no mixed answer.
          if (isFsError(err, 'EBUSY')) {
            busy++;
            continue;
          }
          throw err;
        }
        const got = new TextDecoder().decode(r.bytes);
        expect([A, B].includes(got), `bytes of neither version (${got.length} bytes)`).toBe(true);
        expect(r.stat.size, `a stat of ${r.stat.size} bytes with ${got.length} bytes`).toBe(got.length);
        answered++;
      }
    } finally {
      await replacer.terminate();
    }
    expect(answered).toBeGreaterThan(busy);
  });
});
