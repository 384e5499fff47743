import { AsyncLocalStorage } from 'node:async_hooks';
import { type ContextLayer, createContext } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { MemoryFilesystem } from '@ctxfs/memory';
import { defineCommand } from 'just-bash';
import { afterEach, describe, expect, it } from 'vitest';
import { testSchemaName } from '../../context/test/support/test-state.ts';
import { CtxfsBash } from '../src/index.ts';

// Undo of a command whose run another agent's edit landed in the middle of: the command's changes are
// reverted, the other agent's kept, and history holds only versions somebody made.

const LINES = `${Array.from({ length: 30 }, (_, i) => `line${i}`).join('\n')}\n`;

const url = process.env.CTXFS_TEST_POSTGRES_URL;
const STORES: Array<[string, () => string]> = [['sqlite', () => ':memory:']];
if (url !== undefined) STORES.push(['postgres', () => `${url}${url.includes('?') ? '&' : '?'}schema=${testSchemaName('bash')}`]);

const opened: Array<{ ctx: ContextLayer; fs: Filesystem }> = [];
afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.ctx.close();
    await o.fs.close();
  }
});

const text = async (fs: Filesystem, path: string): Promise<string> => new TextDecoder().decode(await fs.readBytes(path));

/** Each version of `path`, newest first, as `#seq op by author` and the lines that are not `lineN`. */
async function versions(ctx: ContextLayer, path: string): Promise<string[]> {
  const out: string[] = [];
  for (const v of await ctx.history(path)) {
    const t = (await ctx.getVersion(path, v.seq)).text ?? '';
    out.push(
      `#${v.seq} ${v.op} by ${v.author}: ${t
        .split('\n')
        .filter((l) => l !== '' && !/^line\d+$/.test(l))
        .join(',')}`,
    );
  }
  return out;
}

describe.each(STORES)('undo of a just-bash command over %s', (_name, store) => {
  /** A context over `fs` (a.txt of 30 lines by default), with the sessions of the agent running commands and of another. */
  const open = async (fs: Filesystem = new MemoryFilesystem({ files: { 'a.txt': LINES } })) => {
    const ctx = await createContext({ fs, store: store(), safety: { policyFiles: false } });
    opened.push({ ctx, fs });
    return { fs, ctx, other: ctx.session({ agent: 'other' }), shell: ctx.session({ agent: 'shell' }) };
  };

  /** A command writing `path` twice (as two `sed -i`s would), `between` run by the host between the writes. */
  const twice = (between: (path: string) => Promise<unknown>) => {
    const host = AsyncLocalStorage.snapshot();
    return defineCommand('twice', async ([path], c) => {
      const target = c.fs.resolvePath(c.cwd, path as string);
      await c.fs.writeFile(target, (await c.fs.readFile(target)).replace('line7\n', 'SED7\n'));
      await host(() => between(path as string));
      await c.fs.writeFile(target, (await c.fs.readFile(target)).replace('line20\n', 'SED20\n'));
      return { stdout: '', stderr: '', exitCode: 0 };
    });
  };

  it("another agent's edit between two writes of the file: undo reverts both writes and keeps the edit", async () => {
    const { fs, ctx, other, shell } = await open();
    const bash = new CtxfsBash(shell, { customCommands: [twice((p) => other.replace(p, 'line12\n', 'OTHER\n'))] });
    expect(await bash.exec('twice a.txt')).toMatchObject({ stderr: '', exitCode: 0, changes: [{ path: 'a.txt', op: 'write', seq: 4 }] });
    // The command's first write is its own version, before the other agent's; no return to the original nobody made.
    expect(await versions(ctx, 'a.txt')).toEqual([
      '#4 write by shell: SED7,OTHER,SED20',
      '#3 replace by other: SED7,OTHER',
      '#2 write by shell: SED7',
      '#1 initial by initial: ',
    ]);
    expect((await ctx.history('a.txt')).filter((v) => v.author === 'shell').map((v) => v.message)).toEqual(['$ twice a.txt', '$ twice a.txt']);

    const u = await shell.undo('a.txt');
    expect(u.success, u.message).toBe(true);
    expect(await text(fs, 'a.txt')).toBe(LINES.replace('line12\n', 'OTHER\n'));
    // Both parts are undone: nothing of the shell's is left to undo.
    const again = await shell.undo('a.txt');
    expect(again).toMatchObject({ success: false, code: 'ENOENT' });
    expect(again.message).toContain('#3 (replace), was made by other');
  });

  it("another agent's edit merged into the command's write (landing before its compare-and-swap): undo reverts the command's change only", async () => {
    const memory = new MemoryFilesystem({ files: { 'a.txt': LINES } });
    let otherEdit: (() => Promise<unknown>) | undefined;
    // Passes every call through to the real filesystem; runs the other agent's edit once, just before the
    // command's first compare-and-swap write of a.txt.
    const fs = new Proxy(memory, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop !== 'writeBytes') return value.bind(target);
        return async (path: string, bytes: Uint8Array, options?: { ifMatch?: string }) => {
          const edit = otherEdit;
          if (path === 'a.txt' && options?.ifMatch !== undefined && edit !== undefined) {
            otherEdit = undefined;
            await edit();
          }
          return value.call(target, path, bytes, options);
        };
      },
    });
    const { ctx, other, shell } = await open(fs);
    const host = AsyncLocalStorage.snapshot();
    otherEdit = () => host(() => other.replace('a.txt', 'line12\n', 'OTHER\n'));

    expect(await new CtxfsBash(shell).exec("sed -i 's/line7$/SED7/' a.txt")).toMatchObject({ stderr: '', exitCode: 0 });
    expect(otherEdit).toBeUndefined();
    expect(await versions(ctx, 'a.txt')).toEqual(['#3 write by shell: SED7,OTHER', '#2 replace by other: OTHER', '#1 initial by initial: ']);

    const u = await shell.undo('a.txt');
    expect(u.success, u.message).toBe(true);
    expect(await text(fs, 'a.txt')).toBe(LINES.replace('line12\n', 'OTHER\n'));
  });

  it("another agent's edit of a line the command changed: undo refuses, and the edit stays", async () => {
    const { fs, ctx, other, shell } = await open();
    const bash = new CtxfsBash(shell, { customCommands: [twice((p) => other.replace(p, 'SED7\n', 'OTHER7\n'))] });
    expect(await bash.exec('twice a.txt')).toMatchObject({ stderr: '', exitCode: 0 });
    const both = LINES.replace('line7\n', 'OTHER7\n').replace('line20\n', 'SED20\n');
    expect(await text(fs, 'a.txt')).toBe(both);

    const history = ['#4 write by shell: OTHER7,SED20', '#3 replace by other: OTHER7', '#2 write by shell: SED7', '#1 initial by initial: '];
    expect(await versions(ctx, 'a.txt')).toEqual(history);

    const u = await shell.undo('a.txt');
    expect(u).toMatchObject({ success: false, code: 'ECONFLICT' });
    expect(await text(fs, 'a.txt')).toBe(both);
    expect(await versions(ctx, 'a.txt')).toEqual(history);
  });

  it('a command nobody interleaves with is still one version, and one undo', async () => {
    const { fs, ctx, shell } = await open();
    const bash = new CtxfsBash(shell, { customCommands: [twice(async () => undefined)] });
    expect(await bash.exec('twice a.txt')).toMatchObject({ exitCode: 0, changes: [{ path: 'a.txt', op: 'write', seq: 2 }] });
    expect(await versions(ctx, 'a.txt')).toEqual(['#2 write by shell: SED7,SED20', '#1 initial by initial: ']);
    expect((await shell.undo('a.txt')).success).toBe(true);
    expect(await text(fs, 'a.txt')).toBe(LINES);
  });
});
