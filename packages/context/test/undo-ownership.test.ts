/**
 * Undo keeps everybody's work: it reverts the caller's own change and
 * leaves a person's or another agent's alone; a move stays a move in
 * history; retention, binary content and a deletion on disk under an open
 * buffer never make an undo or a buffer destroy what someone made. Each
 * case was found by a campaign that drove the built packages (the history
 * campaign of session 20) and failed before its fix.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const LINES = `${Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n')}\n`;
const text = async (ws: Workspace, p: string) => new TextDecoder().decode(await ws.fs.readBytes(p));

describe.each(BACKENDS)('undo keeps what others made, on $name', (backend) => {
  const open: Array<{ ws: Workspace; ctxs: ContextLayer[] }> = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      for (const c of o.ctxs) await c.close();
      await o.ws.cleanup();
    }
  });
  const setup = async (files: Record<string, string>, agents: readonly string[] = ['llm:a']) => {
    const ws = await backend.create(files);
    const store = testState();
    const ctxs: ContextLayer[] = [];
    for (const agent of agents) ctxs.push(await createContext({ fs: ws.fs, store, agent, safety: { policyFiles: false } }));
    open.push({ ws, ctxs });
    return { ws, ctxs };
  };

  it("reverts the caller's own change and keeps a person's made since", async () => {
    const { ws, ctxs } = await setup({ 'a.txt': LINES });
    const [a] = ctxs as [ContextLayer];
    expect((await a.replace('a.txt', 'l2\n', 'OURS2\n')).success).toBe(true);
    await ws.external('a.txt', (await text(ws, 'a.txt')).replace('l7\n', 'PERSON7\n'));
    const r = await a.undo('a.txt');
    expect(r.success, r.message).toBe(true);
    const disk = await text(ws, 'a.txt');
    expect(disk).toContain('l2\n');
    expect(disk).toContain('PERSON7\n');
    expect(disk).not.toContain('OURS2');
  });

  it("reverts its own agent's change, not another agent's made later", async () => {
    const { ws, ctxs } = await setup({ 'a.txt': LINES }, ['llm:a', 'llm:b']);
    const [a, b] = ctxs as [ContextLayer, ContextLayer];
    expect((await b.replace('a.txt', 'l8\n', 'B8\n')).success).toBe(true);
    await a.readFile('a.txt');
    expect((await a.replace('a.txt', 'l1\n', 'A1\n')).success).toBe(true);
    const r = await b.undo('a.txt');
    expect(r.success, r.message).toBe(true);
    const disk = await text(ws, 'a.txt');
    expect(disk).toContain('A1\n');
    expect(disk).toContain('l8\n');
  });

  it('with nothing of its own to undo, refuses and names whose change is newest and the call that reverts it', async () => {
    const { ws, ctxs } = await setup({ 'a.txt': LINES });
    const [a] = ctxs as [ContextLayer];
    await a.readFile('a.txt');
    await ws.external('a.txt', LINES.replace('l3\n', 'PERSON3\n'));
    const r = await a.undo('a.txt');
    expect(r.success).toBe(false);
    expect(r.code).toBe('ENOENT');
    expect(r.message).toMatch(/Nothing of yours to undo.*#2 \(external\).*outside ctxfs.*undo\("a\.txt", \{change: 2\}\)/);
    // Said once: the change's kind is external, its author someone outside ctxfs.
    expect(r.message).toContain('#2 (external), was made by someone outside ctxfs;');
    expect(await text(ws, 'a.txt')).toContain('PERSON3');
    // The named call works.
    expect((await a.undo('a.txt', { change: 2 })).success).toBe(true);
    expect(await text(ws, 'a.txt')).toBe(LINES);
  });

  it("does not delete a file a person made again after the agent's delete", async () => {
    const { ws, ctxs } = await setup({ 'a.txt': LINES });
    const [a] = ctxs as [ContextLayer];
    await a.readFile('a.txt');
    expect((await a.deleteFile('a.txt')).success).toBe(true);
    await ws.external('a.txt', 'made again by a person\n');
    const r = await a.undo('a.txt');
    expect(r.success).toBe(false);
    expect(r.code).toBe('ECONFLICT');
    expect(await text(ws, 'a.txt')).toBe('made again by a person\n');
  });

  it("a patch's move is a rename in history: undo brings the name and the content back, from either path", async () => {
    for (const path of ['c.txt', 'b.txt']) {
      const { ws, ctxs } = await setup({ 'b.txt': LINES, 'a.txt': 'x\n' });
      const [a] = ctxs as [ContextLayer];
      const patch = '*** Begin Patch\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n-l1\n+L1\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\n';
      const p = await a.applyPatch(patch);
      expect(p.success, p.message).toBe(true);
      expect(await text(ws, 'c.txt')).toBe(LINES.replace('l1\n', 'L1\n'));
      const [dst, src] = [await a.history('c.txt'), await a.history('b.txt')];
      expect(dst[0]).toMatchObject({ op: 'rename', relatedPath: 'b.txt' });
      expect(src[0]).toMatchObject({ op: 'rename', relatedPath: 'c.txt' });
      const r = await a.undo(path);
      expect(r.success, r.message).toBe(true);
      expect(await text(ws, 'b.txt')).toBe(LINES);
      expect(await ws.fs.exists('c.txt')).toBe(false);
      // The patch's other file is its own undo: this one reverted the move alone.
      expect(await text(ws, 'a.txt')).toBe('y\n');
      // Undone on both paths: nothing of the move is left to undo.
      for (const again of ['b.txt', 'c.txt']) expect((await a.undo(again)).code).toBe('ENOENT');
    }
  });

  it('undo of a rename over an existing file brings both back; one that moved on since is refused with the way back', async () => {
    const { ws, ctxs } = await setup({ 'a.txt': 'A\n', 'b.txt': 'precious\n' });
    const [a] = ctxs as [ContextLayer];
    expect((await a.renameFile('a.txt', 'b.txt', { overwrite: true })).success).toBe(true);
    const r = await a.undo('b.txt');
    expect(r.success, r.message).toBe(true);
    expect([await text(ws, 'a.txt'), await text(ws, 'b.txt')]).toEqual(['A\n', 'precious\n']);
    // Moved on since: a person edited the destination after the rename.
    expect((await a.renameFile('a.txt', 'c.txt')).success).toBe(true);
    await ws.external('c.txt', 'changed by a person\n');
    const refused = await a.undo('c.txt');
    expect(refused).toMatchObject({ success: false, code: 'ECONFLICT', next: 'renameFile("c.txt", "a.txt")' });
    expect(refused.message).toContain('c.txt changed since');
    expect(await text(ws, 'c.txt')).toBe('changed by a person\n');
    expect(await ws.fs.exists('a.txt')).toBe(false);
  });

  it('refuses to undo past what retention kept, and keeps the file', async () => {
    const { ws, ctxs } = await setup({ 'a.txt': 'v0\n' });
    const [a] = ctxs as [ContextLayer];
    for (let i = 1; i <= 8; i++) expect((await a.writeFile('a.txt', `v${i}\n`)).success).toBe(true);
    await a.pruneHistory({ maxVersionsPerFile: 3 });
    const kept = (await a.history('a.txt')).length;
    expect(kept).toBe(3);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await a.undo('a.txt'));
    const refused = results.find((r) => !r.success);
    expect(refused?.message).toMatch(/removed by retention/);
    expect(await ws.fs.exists('a.txt')).toBe(true);
    // A version retention removed is named so, not "no version".
    await expect(a.getVersion('a.txt', 2)).rejects.toMatchObject({ code: 'ENOENT', reason: expect.stringContaining('removed by retention') });
    await expect(a.getVersion('a.txt', 99)).rejects.toMatchObject({ code: 'ENOENT', reason: expect.stringContaining('no version') });
  });

  it('retention with room to spare keeps what an agent read, so its stale edit still merges', async () => {
    const { ws, ctxs } = await setup({ 'a.txt': LINES });
    const [a] = ctxs as [ContextLayer];
    await a.readFile('a.txt');
    const pruned = await a.pruneHistory();
    expect(pruned.blobsRemoved).toBe(0);
    await ws.external('a.txt', LINES.replace('l8\n', 'EXT8\n'));
    const r = await a.replace('a.txt', 'l1\n', 'OURS1\n');
    expect(r.success, r.message).toBe(true);
    expect(r.merged).toBe(true);
    expect(await text(ws, 'a.txt')).toBe(LINES.replace('l8\n', 'EXT8\n').replace('l1\n', 'OURS1\n'));
  });

  it('deletes, renames and undoes a binary file (whole-file operations move bytes, never text)', async () => {
    const { ws, ctxs } = await setup({ 'x.txt': 'placeholder\n' });
    const [a] = ctxs as [ContextLayer];
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 1, 2, 3]);
    await ws.fs.writeBytes('x.bin', png);
    const renamed = await a.renameFile('x.bin', 'y.bin');
    expect(renamed.success, renamed.message).toBe(true);
    expect(await ws.fs.readBytes('y.bin')).toEqual(png);
    const deleted = await a.deleteFile('y.bin');
    expect(deleted.success, deleted.message).toBe(true);
    const undone = await a.undo('y.bin');
    expect(undone.success, undone.message).toBe(true);
    expect(await ws.fs.readBytes('y.bin')).toEqual(png);
  });
});

describe.each(BACKENDS)('a buffer with unsaved edits, on $name', (backend) => {
  it('keeps them when the file is deleted on disk, and a save makes the file again', async () => {
    const ws = await backend.create({ 'a.txt': LINES });
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
    try {
      await ctx.buffers.open('a.txt');
      await ctx.buffers.replace('a.txt', 'l2', 'UNSAVED WORK');
      await ws.external('a.txt', null);
      const [status] = await ctx.buffers.status('a.txt');
      expect(status).toMatchObject({ dirty: true, onDisk: false });
      expect((await ctx.buffers.content('a.txt'))?.text).toContain('UNSAVED WORK');
      expect((await ctx.buffers.save('a.txt')).saved).toBe(true);
      expect(await text(ws, 'a.txt')).toBe(LINES.replace('l2', 'UNSAVED WORK'));
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });

  it('under human, a deletion is a conflict that says the file is gone', async () => {
    const ws = await backend.create({ 'a.txt': LINES });
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false } });
    try {
      await ctx.buffers.open('a.txt', { permission: 'human' });
      await ctx.buffers.replace('a.txt', 'l2', 'UNSAVED WORK');
      await ws.external('a.txt', null);
      const [status] = await ctx.buffers.status('a.txt');
      expect(status).toMatchObject({ status: 'conflict', onDisk: false });
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });
});
