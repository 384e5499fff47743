import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';

/** A workspace on one backend, with a way to edit it behind ctxfs's back. */
export interface Workspace {
  readonly fs: Filesystem;
  /** Changes a file without going through the context layer. */
  external(path: string, text: string | null): Promise<void>;
  cleanup(): Promise<void>;
}

export interface BackendFactory {
  readonly name: string;
  create(files: Record<string, string>): Promise<Workspace>;
}

export const memoryBackend: BackendFactory = {
  name: 'memory',
  async create(files) {
    const fs = new MemoryFilesystem({ files });
    return {
      fs,
      async external(path, text) {
        if (text === null) await fs.delete(path);
        else await fs.write(path, text, { createParents: true });
      },
      cleanup: () => fs.close(),
    };
  },
};

export const hostBackend: BackendFactory = {
  name: 'host',
  async create(files) {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-context-'));
    const root = join(base, 'ws');
    mkdirSync(root);
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, p)), { recursive: true });
      writeFileSync(join(root, p), text);
    }
    const fs = await HostFilesystem.open({ root, stateDir: join(base, 'host-state'), durability: 'none' });
    let tick = 0;
    return {
      fs,
      async external(path, text) {
        const abs = join(root, path);
        if (text === null) rmSync(abs);
        else {
          mkdirSync(dirname(abs), { recursive: true });
          writeFileSync(abs, text);
          // A distinct mtime even within one clock tick, as a real later edit has.
          const t = new Date(Date.now() + ++tick * 1000);
          utimesSync(abs, t, t);
        }
      },
      async cleanup() {
        await fs.close();
        rmSync(base, { recursive: true, force: true });
      },
    };
  },
};

export const BACKENDS: readonly BackendFactory[] = [memoryBackend, hostBackend];
