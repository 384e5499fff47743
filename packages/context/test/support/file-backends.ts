/**
 * The backends the legacy-encoding suites of the context layer run on:
 * memory, and the host on a temporary directory, each given its files' bytes.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';

/** A workspace of one backend, and how to remove it. */
export interface TestWorkspace {
  readonly fs: Filesystem;
  cleanup(): Promise<void>;
}

/** A backend that opens a workspace holding `files` (path → bytes). */
export interface FileBackend {
  readonly name: string;
  open(files: ReadonlyMap<string, Uint8Array>): Promise<TestWorkspace>;
}

export const FILE_BACKENDS: readonly FileBackend[] = [
  {
    name: 'memory',
    async open(files) {
      const fs = new MemoryFilesystem({ files: Object.fromEntries(files) });
      return { fs, cleanup: () => fs.close() };
    },
  },
  {
    name: 'host',
    async open(files) {
      const base = mkdtempSync(join(tmpdir(), 'ctxfs-context-enc-'));
      mkdirSync(join(base, 'ws'));
      for (const [p, bytes] of files) writeFileSync(join(base, 'ws', p), bytes);
      const fs = await HostFilesystem.open({ root: join(base, 'ws'), stateDir: join(base, 'state'), durability: 'none' });
      return {
        fs,
        async cleanup() {
          await fs.close();
          rmSync(base, { recursive: true, force: true });
        },
      };
    },
  },
];
