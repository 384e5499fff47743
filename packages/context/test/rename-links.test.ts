/**
 * Renaming a symbolic link moves the link itself, as `mv` does. The move
 * happened and then the registry looked through the link at its new name:
 * a link outside the root failed with EPATHESCAPE and a link to a directory
 * with EISDIR, both naming the destination, so the call reported a refusal
 * of a rename it had made (found through the MCP server, on every backend).
 *
 * A link that leads outside the root is renamed like any other: moving the
 * link within the root reads and writes nothing outside it, as deleting it
 * does. The memory backend has no links, so these run on the host backend.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { hostBackend, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const OUTSIDE = '/etc/passwd';

async function withLinks(
  body: (ctx: ContextLayer, ws: Workspace, root: string) => Promise<void>,
  safety?: Parameters<typeof createContext>[0]['safety'],
): Promise<void> {
  const ws = await hostBackend.create({ 'ok.txt': 'hello\n', 'docs/guide.md': 'guide\n', 'taken.txt': 'keep me\n' });
  const root = ws.fs.root as string;
  symlinkSync(OUTSIDE, join(root, 'escape-passwd'));
  symlinkSync('docs', join(root, 'docslink'));
  symlinkSync('ok.txt', join(root, 'alias.txt'));
  const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test', ...(safety === undefined ? {} : { safety }) });
  try {
    await body(ctx, ws, root);
  } finally {
    await ctx.close();
    await ws.cleanup();
  }
}

const linkTo = (root: string, path: string): string | undefined =>
  lstatSync(join(root, path), { throwIfNoEntry: false })?.isSymbolicLink() === true ? readlinkSync(join(root, path)) : undefined;

async function auditOf(ctx: ContextLayer): Promise<string[]> {
  await ctx.store.flushAudit();
  const rows = await ctx.store.all<{ path: string; result: string }>("SELECT path, result FROM audit WHERE op = 'renameFile' ORDER BY id");
  return rows.map((r) => `${r.path} ${r.result}`);
}

async function registered(ctx: ContextLayer): Promise<string[]> {
  return (await ctx.store.all<{ path: string }>('SELECT path FROM files ORDER BY path')).map((r) => r.path);
}

describe('renaming a link on host', () => {
  it('a link outside the root is moved within it, succeeds and is recorded; nothing outside changes', async () => {
    const outside = readFileSync(OUTSIDE);
    await withLinks(async (ctx, _ws, root) => {
      const moved = await ctx.renameFile('escape-passwd', 'stolen');
      expect(moved, moved.message).toMatchObject({ success: true, op: 'rename', path: 'stolen' });
      expect(moved.message).toContain('Moved the link escape-passwd to stolen');
      expect(linkTo(root, 'stolen')).toBe(OUTSIDE);
      expect(linkTo(root, 'escape-passwd')).toBeUndefined();
      expect(readFileSync(OUTSIDE)).toEqual(outside);
      // Still a link that leads outside: reading through it is refused as before.
      await expect(ctx.readFile('stolen')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      expect(await auditOf(ctx)).toEqual(['escape-passwd ok']);
      expect(await registered(ctx)).not.toContain('stolen');
    });
  });

  it('a link to a directory is moved, not refused as a directory', async () => {
    await withLinks(async (ctx, _ws, root) => {
      const moved = await ctx.renameFile('docslink', 'docslink2');
      expect(moved, moved.message).toMatchObject({ success: true, path: 'docslink2' });
      expect(linkTo(root, 'docslink2')).toBe('docs');
      expect(linkTo(root, 'docslink')).toBeUndefined();
      expect(readFileSync(join(root, 'docs/guide.md'), 'utf8')).toBe('guide\n');
      expect(await auditOf(ctx)).toEqual(['docslink ok']);
    });
  });

  it('a link to a file leaves no record under its new name: the registry holds files by their own names', async () => {
    await withLinks(async (ctx, _ws, root) => {
      await ctx.scan();
      const moved = await ctx.renameFile('alias.txt', 'alias2.txt');
      expect(moved, moved.message).toMatchObject({ success: true, path: 'alias2.txt' });
      expect(linkTo(root, 'alias2.txt')).toBe('ok.txt');
      const files = await registered(ctx);
      expect(files).toContain('ok.txt');
      expect(files.filter((p) => p.startsWith('alias'))).toEqual([]);
      expect((await ctx.history('ok.txt')).map((v) => v.op)).toEqual(['initial']);
    });
  });

  it('overwriting a file with a link forgets the file it replaced', async () => {
    await withLinks(async (ctx, _ws, root) => {
      await ctx.scan();
      expect(await registered(ctx)).toContain('taken.txt');
      const moved = await ctx.renameFile('escape-passwd', 'taken.txt', { overwrite: true });
      expect(moved, moved.message).toMatchObject({ success: true, path: 'taken.txt' });
      expect(linkTo(root, 'taken.txt')).toBe(OUTSIDE);
      expect(await registered(ctx)).not.toContain('taken.txt');
    });
  });

  // The move unlinked the file with no version (as `mv link file` does): its content was gone for good.
  it('a file a link replaces is deleted as a version first, and the hint given brings it back', async () => {
    await withLinks(async (ctx, _ws, root) => {
      const dry = await ctx.renameFile('alias.txt', 'taken.txt', { overwrite: true, dryRun: true });
      expect(dry, dry.message).toMatchObject({ success: true, dryRun: true, linesRemoved: 1 });
      expect(dry.message).toContain('would be deleted as a version');
      expect(readFileSync(join(root, 'taken.txt'), 'utf8')).toBe('keep me\n');
      expect((await ctx.history('taken.txt')).map((v) => v.op)).toEqual(['initial']);

      const moved = await ctx.renameFile('alias.txt', 'taken.txt', { overwrite: true });
      expect(moved, moved.message).toMatchObject({ success: true, path: 'taken.txt', linesRemoved: 1 });
      expect(moved.diff).toContain('-keep me');
      expect(linkTo(root, 'taken.txt')).toBe('ok.txt');
      expect(readFileSync(join(root, 'ok.txt'), 'utf8')).toBe('hello\n');
      expect(moved.message).toContain('taken.txt, the file it replaced, was deleted as a version');
      // The hint, followed: move the link away, then the undo it names.
      const undoCall = /then (undo\("taken\.txt"\))/.exec(moved.message)?.[1];
      expect(undoCall).toBe('undo("taken.txt")');
      expect((await ctx.renameFile('taken.txt', 'alias.txt')).success).toBe(true);
      const undone = await ctx.undo('taken.txt');
      expect(undone, undone.message).toMatchObject({ success: true });
      expect(readFileSync(join(root, 'taken.txt'), 'utf8')).toBe('keep me\n');
      expect(readFileSync(join(root, 'ok.txt'), 'utf8')).toBe('hello\n');
      expect(linkTo(root, 'alias.txt')).toBe('ok.txt');
    });
  });

  it('a link over a file the policy keeps from deletion is refused by the rename decision, nothing moved', async () => {
    await withLinks(
      async (ctx, _ws, root) => {
        await expect(ctx.renameFile('alias.txt', 'taken.txt', { overwrite: true })).rejects.toMatchObject({ code: 'EDENIED' });
        expect(readFileSync(join(root, 'taken.txt'), 'utf8')).toBe('keep me\n');
        expect(linkTo(root, 'alias.txt')).toBe('ok.txt');
      },
      { policyFiles: false, policy: { rules: [{ effect: 'deny', ops: ['rename'], paths: ['taken.txt'] }] } },
    );
  });

  it('a refused rename of a link changes nothing and names the path at fault', async () => {
    await withLinks(
      async (ctx, _ws, root) => {
        // The destination exists: refused, naming it, both entries kept.
        const taken = await ctx.renameFile('escape-passwd', 'taken.txt');
        expect(taken).toMatchObject({ success: false, code: 'EEXIST', path: 'taken.txt' });
        expect(linkTo(root, 'escape-passwd')).toBe(OUTSIDE);
        expect(readFileSync(join(root, 'taken.txt'), 'utf8')).toBe('keep me\n');
        // The policy denies the destination: refused before anything moves.
        await expect(ctx.renameFile('escape-passwd', 'locked/stolen')).rejects.toMatchObject({ code: 'EDENIED' });
        await expect(ctx.renameFile('docslink', 'locked/docs')).rejects.toMatchObject({ code: 'EDENIED' });
        expect(linkTo(root, 'escape-passwd')).toBe(OUTSIDE);
        expect(linkTo(root, 'docslink')).toBe('docs');
        expect(existsSync(join(root, 'locked'))).toBe(false);
        // A dry run moves nothing.
        const dry = await ctx.renameFile('escape-passwd', 'stolen', { dryRun: true });
        expect(dry).toMatchObject({ success: true, dryRun: true });
        expect(linkTo(root, 'escape-passwd')).toBe(OUTSIDE);
        expect(linkTo(root, 'stolen')).toBeUndefined();
      },
      { policyFiles: false, policy: { rules: [{ effect: 'deny', ops: ['rename'], paths: ['locked/**'] }] } },
    );
  });

  it('a link moved into a directory that leads outside the root is refused, nothing moved', async () => {
    await withLinks(async (ctx, _ws, root) => {
      const outsideDir = join(root, '..', 'outside');
      mkdirSync(outsideDir);
      symlinkSync(outsideDir, join(root, 'outdir'));
      const result = await ctx.renameFile('docslink', 'outdir/docslink').catch((err: unknown) => err);
      expect(result).toMatchObject({ code: 'EPATHESCAPE', path: 'outdir/docslink' });
      expect(linkTo(root, 'docslink')).toBe('docs');
      expect(readdirSync(outsideDir)).toEqual([]);
    });
  });
});
