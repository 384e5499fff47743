/** just-bash through ctxfs refuses a file named with a trailing slash as bash does, and changes nothing (helper 66's campaign). */
import { createContext } from '@ctxfs/context';
import { MemoryFilesystem } from '@ctxfs/memory';
import { describe, expect, it } from 'vitest';
import { CtxfsBash, CtxfsBashFs } from '../src/index.ts';

async function workspace() {
  const fs = new MemoryFilesystem({ files: { 'a.txt': 'a\n', 'd/x.txt': 'x\n' } });
  const ctx = await createContext({ fs, store: ':memory:', safety: { policyFiles: false } });
  return { fs, ctx };
}

describe('just-bash and a name ending in "/"', () => {
  it.each([
    // just-bash's cat asks whether the path exists first, and a file named as a directory does not.
    ['cat a.txt/', /No such file or directory/],
    ['echo x > new/', /Is a directory/],
    // A redirection opens with O_CREAT, which Linux answers EISDIR for any name ending in "/": bash says so.
    ['echo x >> a.txt/', /Is a directory/],
    ['echo x > a.txt/', /Is a directory/],
    ['rm a.txt/', /not a directory/i],
    ['touch t/', /./],
  ])('%s fails as bash does, and changes nothing', async (script, said) => {
    const { fs, ctx } = await workspace();
    try {
      const r = await new CtxfsBash(ctx).exec(script);
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toMatch(said);
      expect(r.stdout).toBe('');
      expect(new TextDecoder().decode(await fs.readBytes('a.txt'))).toBe('a\n');
      expect((await fs.list('')).map((e) => e.path).sort()).toEqual(['a.txt', 'd']);
    } finally {
      await ctx.close();
    }
  });

  it('CtxfsBashFs itself refuses the slashed name (just-bash hands it over as typed)', async () => {
    const { fs, ctx } = await workspace();
    try {
      const b = new CtxfsBashFs(ctx);
      await expect(b.readFile('/a.txt/')).rejects.toMatchObject({ code: 'ENOTDIR' });
      await expect(b.writeFile('/new/', 'x')).rejects.toMatchObject({ code: 'EISDIR' });
      await expect(b.rm('/a.txt/')).rejects.toMatchObject({ code: 'ENOTDIR' });
      expect((await fs.list('')).map((e) => e.path).sort()).toEqual(['a.txt', 'd']);
    } finally {
      await ctx.close();
    }
  });

  it('a directory named with its slash still works: cd, ls, mkdir -p, cp and mv into it, rmdir', async () => {
    const { fs, ctx } = await workspace();
    try {
      const r = await new CtxfsBash(ctx).exec('cd d/ && pwd && cd / && ls d/ && mkdir -p e/f/ && cp a.txt d/ && mv d/x.txt e/ && rmdir e/f/ && ls d e');
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe('/d\nx.txt\nd:\na.txt\n\ne:\nx.txt\n');
      expect((await fs.list('e')).map((e) => e.path)).toEqual(['e/x.txt']);
    } finally {
      await ctx.close();
    }
  });
});
