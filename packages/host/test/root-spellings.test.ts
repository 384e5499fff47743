/**
 * A workspace opened through a link (`/tmp/link` leading to `/tmp/real`, or
 * a macOS temp dir under `/var/…` that is `/private/var/…`) is known by its
 * real path, but a caller writes the path it was given: `/tmp/link/src/a.ts`.
 * Its refusal gave only the general hint, since the root kept no other
 * spelling; and the filesystem's own calls gave the general hint even for
 * its real path, as they resolved paths knowing no root at all. Now the
 * root as given is one of its `absoluteRoots`, core resolves the
 * filesystem's own calls against the root's spellings, and the refusal
 * names the relative path to use, which works, on the direct API and
 * through the context layer alike. A path outside the workspace is refused
 * as before, naming nothing. Real directories, a real link.
 */
import nodeFs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createContext } from '@ctxfs/context';
import { type FsError, isFsError } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { Toolset } from '@ctxfs/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const GENERIC = 'use a path relative to the workspace root, e.g. "src/index.ts"';
/** The relative path a refusal names, if any. */
const named = (err: unknown) => /use the path relative to the workspace root: "([^"]+)"/.exec(String((err as Error)?.message))?.[1];

// The temp dir's real path, so `real` below is what the host keeps as its root (macOS's /var is a link).
const base = nodeFs.realpathSync(nodeFs.mkdtempSync(path.join(os.tmpdir(), 'ctxfs-spellings-')));
const real = path.join(base, 'real');
const link = path.join(base, 'link');
let viaLink: HostFilesystem;
let viaReal: HostFilesystem;

beforeAll(async () => {
  nodeFs.mkdirSync(path.join(real, 'src'), { recursive: true });
  nodeFs.writeFileSync(path.join(real, 'src/a.ts'), 'export const a = 1;\n');
  nodeFs.mkdirSync(path.join(base, 'real2'));
  nodeFs.symlinkSync(real, link);
  viaLink = await HostFilesystem.open({ root: link, stateDir: path.join(base, 'state-link') });
  viaReal = await HostFilesystem.open({ root: real, stateDir: path.join(base, 'state-real') });
});
afterAll(async () => {
  await viaLink?.close();
  await viaReal?.close();
  nodeFs.rmSync(base, { recursive: true, force: true });
});

/** The refusal of `call`, which must fail. */
async function refusal(call: Promise<unknown>): Promise<FsError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isFsError(err)) throw new Error(`not refused with an FsError: ${String(err)}`);
  return err;
}

describe('a host root opened through a link', () => {
  it('keeps its real path as root and the path it was given as its other spelling', async () => {
    expect(viaLink.root).toBe(real);
    expect(viaLink.absoluteRoots).toEqual([link]);
    // Given by its real path (or a relative spelling of it), there is no other.
    expect(viaReal.absoluteRoots).toBeUndefined();
    const relative = new HostFilesystem({ root: path.relative(process.cwd(), real), stateDir: path.join(base, 'state-rel') });
    expect(relative.absoluteRoots).toBeUndefined();
    await relative.close();
  });

  it("the filesystem's own calls name the relative path, under either spelling, and it reads", async () => {
    for (const [fs, dir] of [
      [viaLink, link],
      [viaLink, real],
      [viaReal, real],
    ] as const) {
      for (const call of [
        () => fs.read(`${dir}/src/a.ts`),
        () => fs.stat(`${dir}/src/a.ts`),
        () => fs.write(`${dir}/src/b.ts`, 'x'),
        () => fs.list(`${dir}/src/`),
      ]) {
        const err = await refusal(call());
        expect(err.code).toBe('EPATHESCAPE');
        expect(named(err), `${dir}: ${err.message}`).toMatch(/^src(\/a\.ts|\/b\.ts)?$/);
      }
      expect((await refusal(fs.list(dir))).hint).toBe('that is the workspace root itself: name it "."');
      expect((await fs.read(named(await refusal(fs.read(`${dir}/src/a.ts`))) as string)).text).toContain('export const a = 1;');
    }
  });

  it('a path outside the workspace, or one that climbs out of it, is refused naming nothing', async () => {
    for (const p of ['/etc/passwd', base, `${link}/../real2/x.ts`, `${link}2/src/a.ts`, path.join(base, 'real2/src/a.ts')]) {
      const err = await refusal(viaLink.read(p));
      expect(err.code, p).toBe('EPATHESCAPE');
      expect(err.hint, p).toBe(GENERIC);
      expect(err.reason, p).toBe('absolute paths are not accepted');
    }
  });

  it('through the context layer: readFile and read_file of the linked path name the relative path, and that call reads', async () => {
    const ctx = await createContext({ fs: viaLink, safety: { policyFiles: false } });
    try {
      const session = ctx.session({ agent: 'llm:test', profile: 'small' });
      const err = await session.readFile(`${link}/src/a.ts`).catch((e: unknown) => e);
      expect(named(err), String(err)).toBe('src/a.ts');
      expect((await session.readFile('src/a.ts')).text).toContain('export const a = 1;');

      const tools = new Toolset(session);
      const r = await tools.run('read_file', { path: `${link}/src/a.ts` });
      expect(r.isError).toBe(true);
      const hinted = /use the path relative to the workspace root: "([^"]+)"/.exec(r.text)?.[1];
      expect(hinted, r.text).toBe('src/a.ts');
      const again = await tools.run('read_file', { path: hinted });
      expect(again.isError, again.text).toBe(false);
      expect(again.text).toContain('export const a = 1;');

      const outside = await session.readFile(`${link}/../real2/x.ts`).catch((e: unknown) => e);
      expect(String(outside)).toContain(GENERIC);
      expect(named(outside)).toBeUndefined();
    } finally {
      await ctx.close();
    }
  });
});
