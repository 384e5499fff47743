/**
 * The filesystem factory substituted into just-bash's own filesystem tests
 * (see run-just-bash-suites.sh): their factories are synchronous, ctxfs's
 * context layer opens asynchronously, so the filesystem handed back waits
 * for it on its first call. Every call then goes through `CtxfsBashFs` over
 * a host (or memory) workspace with an in-memory state store.
 */

import { createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { CtxfsBashFs, resolveVirtual } from '@ctxfs/just-bash';
import { MemoryFilesystem } from '@ctxfs/memory';
import type { IFileSystem } from 'just-bash';

function deferred(open: () => Promise<CtxfsBashFs>): IFileSystem {
  const ready = open();
  const target = {} as Record<string | symbol, unknown>;
  return new Proxy(target, {
    get(_t, name) {
      if (name === 'then') return undefined;
      if (name === 'resolvePath') return (base: string, path: string) => resolveVirtual(base, path);
      if (name === 'getAllPaths') return () => [];
      return async (...args: unknown[]) => {
        const fs = (await ready) as unknown as Record<string | symbol, (...a: unknown[]) => unknown>;
        const method = fs[name];
        if (typeof method !== 'function') throw new TypeError(`CtxfsBashFs has no ${String(name)}`);
        return await method.apply(fs, args);
      };
    },
  }) as unknown as IFileSystem;
}

/** just-bash's filesystem over a host workspace at `root` (symlinks inside the root followed, or refused). */
export function ctxfsOnHost(root: string, options: { allowSymlinks?: boolean; maxFileReadSize?: number; readOnly?: boolean } = {}): IFileSystem {
  const { allowSymlinks = false, maxFileReadSize, readOnly = false } = options;
  return deferred(async () => {
    const fs = new HostFilesystem({ root, symlinks: allowSymlinks ? 'follow-inside' : 'refuse', readOnly });
    const ctx = await createContext({ fs, store: ':memory:', safety: { policyFiles: false } });
    return new CtxfsBashFs(ctx, { maxFileReadSize });
  });
}

/** just-bash's filesystem over an empty memory workspace. */
export function ctxfsInMemory(): IFileSystem {
  return deferred(async () => {
    const ctx = await createContext({ fs: new MemoryFilesystem(), safety: { policyFiles: false } });
    return new CtxfsBashFs(ctx);
  });
}
