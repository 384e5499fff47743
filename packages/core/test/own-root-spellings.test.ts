/**
 * A filesystem's own calls (`fs.read('/abs/inside/root/a.ts')`, no context
 * layer) resolved paths knowing no root, so an absolute path inside it got
 * only the general hint while the context layer named the relative path.
 * `FilesystemBase` now resolves against the root's own spellings
 * (`rootSpellings`: `root` where it is an absolute path, and the backend's
 * `absoluteRoots`). A root that is no path (`memory:`) places nothing: the
 * memory backend refuses every absolute path as before. Real memory
 * backend; the host's spellings are tested in host/test/root-spellings.
 */
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, it } from 'vitest';
import { type Filesystem, type FsError, isFsError, resolvePath, rootSpellings } from '../src/index.ts';

const GENERIC = 'use a path relative to the workspace root, e.g. "src/index.ts"';

/** A memory workspace whose root a program sees as `/work` (as a container's workdir is). */
class SpelledMemory extends MemoryFilesystem {
  readonly absoluteRoots = ['/work'] as const;
}

async function refusal(call: () => Promise<unknown>): Promise<FsError> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isFsError(err)) throw new Error(`not refused with an FsError: ${String(err)}`);
  return err;
}

describe("an absolute path in a filesystem's own calls", () => {
  it('names the relative path when it lies inside one of the root spellings, and that path works', async () => {
    await using fs = new SpelledMemory({ files: { 'src/a.ts': 'export const a = 1;\n' } });
    expect(rootSpellings(fs)).toEqual(['memory:', '/work']);
    for (const call of [
      () => fs.read('/work/src/a.ts'),
      () => fs.stat('/work/src/a.ts'),
      () => fs.write('/work/src/a.ts', 'x'),
      () => fs.rename('src/a.ts', '/work/src/b.ts'),
    ]) {
      const err = await refusal(call);
      expect(err.code).toBe('EPATHESCAPE');
      expect(err.hint).toMatch(/^use the path relative to the workspace root: "src\/(a|b)\.ts"$/);
    }
    expect((await refusal(() => fs.list('/work/'))).hint).toBe('that is the workspace root itself: name it "."');
    expect((await fs.read('src/a.ts')).text).toContain('export const a = 1;');
  });

  it('is refused as without roots when it lies outside them, or the root is no path', async () => {
    await using spelled = new SpelledMemory({ files: { 'src/a.ts': '' } });
    await using memory = new MemoryFilesystem({ files: { 'src/a.ts': '' } });
    expect((memory as Filesystem).absoluteRoots).toBeUndefined();
    for (const [fs, path] of [
      [spelled, '/work2/src/a.ts'],
      [spelled, '/work/../etc/passwd'],
      [spelled, '/etc/passwd'],
      [memory, '/src/a.ts'],
      [memory, '/memory:/src/a.ts'],
    ] as const) {
      const err = await refusal(() => fs.read(path));
      const bare = (() => {
        try {
          resolvePath(path, 'read');
        } catch (e) {
          return e as FsError;
        }
        throw new Error(`${path} resolved`);
      })();
      expect({ code: err.code, reason: err.reason, hint: err.hint }, path).toEqual({ code: bare.code, reason: bare.reason, hint: bare.hint });
      expect(err.hint, path).toBe(GENERIC);
    }
  });
});
