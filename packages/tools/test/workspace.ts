import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ContextLayer, type ContextSession, createContext } from '@ctxfs/context';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterEach, beforeEach } from 'vitest';
import { Toolset } from '../src/index.ts';

const ZOD = join(import.meta.dirname, '../node_modules/zod');

/** Real files to work on: two of zod's own sources and its README, as published. */
export const FILES: Readonly<Record<string, string>> = {
  'src/doc.ts': readFileSync(join(ZOD, 'src/v4/core/doc.ts'), 'utf8'),
  'src/registries.ts': readFileSync(join(ZOD, 'src/v4/core/registries.ts'), 'utf8'),
  'README.md': readFileSync(join(ZOD, 'README.md'), 'utf8'),
};

/** A scanned workspace over the memory backend, no policy files, and one session's toolset. */
export interface TestWorkspace {
  readonly fs: MemoryFilesystem;
  readonly ctx: ContextLayer;
  readonly session: ContextSession;
  readonly toolset: Toolset;
  /** The file as it is in the backend now. */
  text(path: string): Promise<string>;
  close(): Promise<void>;
}

export async function openWorkspace(files: Readonly<Record<string, string>> = FILES): Promise<TestWorkspace> {
  const fs = new MemoryFilesystem({ files: { ...files } });
  const ctx = await createContext({ fs, safety: { policyFiles: false } });
  await ctx.scan();
  const session = ctx.session({ agent: 'llm:test', profile: 'small' });
  return {
    fs,
    ctx,
    session,
    toolset: new Toolset(session),
    text: async (path) => new TextDecoder().decode(await fs.readBytes(path)),
    async close() {
      await ctx.close();
      await fs.close();
    },
  };
}

/**
 * A fresh workspace for each test of the suite it is called in: opened
 * before the test, closed after. Call the returned function in a test.
 */
export function freshWorkspace(): () => TestWorkspace {
  let current: TestWorkspace | undefined;
  beforeEach(async () => {
    current = await openWorkspace();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error('The workspace is open only while a test runs.');
    return current;
  };
}
