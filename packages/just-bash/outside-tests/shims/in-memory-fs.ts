// Stands in for just-bash's InMemoryFs in its interface contract tests: ctxfs on a fresh host directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ctxfsInMemory, ctxfsOnHost } from '../ctxfs-factory.ts';

export class InMemoryFs {
  constructor() {
    const root = process.env.CTXFS_CONTRACT_BACKEND === 'memory' ? undefined : mkdtempSync(join(tmpdir(), 'ctxfs-contract-'));
    // biome-ignore lint/correctness/noConstructorReturn: the tests construct the filesystem they are given
    return (root === undefined ? ctxfsInMemory() : ctxfsOnHost(root, { allowSymlinks: true })) as unknown as InMemoryFs;
  }
}
