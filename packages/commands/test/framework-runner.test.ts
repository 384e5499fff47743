/**
 * The session's commands in the adapters' runner shape, driven through the
 * AI SDK sandbox session of `@ctxfs/adapters` (its `run` and `spawn`) on
 * every backend: output, exit code, working directory, standard input
 * written while the command runs, kill, and the policy's refusal.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandRunner as AdapterRunner } from '@ctxfs/adapters';
import { createSandboxSession } from '@ctxfs/adapters/ai-sdk';
import { CtxfsBackend } from '@ctxfs/adapters/deepagents';
import { ContainerFilesystem } from '@ctxfs/container';
import { type ContextLayer, createContext, type PolicyConfig } from '@ctxfs/context';
import type { Filesystem } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { MemoryFilesystem } from '@ctxfs/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable, removeTestContainers, TEST_IMAGE, TEST_LABELS } from '../../container/test/docker-fixture.ts';
import { frameworkRunner } from '../src/index.ts';

let docker = false;
beforeAll(async () => {
  docker = await dockerAvailable();
}, 60_000);
const made: string[] = [];
afterAll(async () => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  if (docker) await removeTestContainers();
});

const OPEN: Record<string, () => Promise<Filesystem>> = {
  memory: async () => new MemoryFilesystem(),
  host: async () => {
    const root = mkdtempSync(join(tmpdir(), 'ctxfs-framework-runner-'));
    made.push(root);
    return new HostFilesystem({ root });
  },
  container: async () => ContainerFilesystem.open({ image: TEST_IMAGE, labels: TEST_LABELS, workdir: '/work' }),
};

async function open(name: string, policy?: PolicyConfig): Promise<{ fs: Filesystem; ctx: ContextLayer }> {
  const fs = await (OPEN[name] as () => Promise<Filesystem>)();
  await fs.write('sub/f.txt', 'in sub\n', { createParents: true });
  return { fs, ctx: await createContext({ fs, store: ':memory:', safety: { policyFiles: false, policy } }) };
}

describe.each(Object.keys(OPEN))('the AI SDK sandbox session over ctxfs %s runs commands through frameworkRunner', (name) => {
  it('run, spawn with standard input, kill, and a refusal by the policy', async () => {
    if (name === 'container' && !docker) throw new Error('no Docker engine: the container backend cannot be tested here');
    const { fs, ctx } = await open(name, { commands: { deny: ['rm *'] } });
    try {
      // The adapters' own type: the shape is the same, nothing converts it.
      const runner: AdapterRunner = frameworkRunner(ctx);
      const s = createSandboxSession({ context: ctx, runner });
      expect(s.description).toContain('the workspace policy decides each one');
      expect(await s.run({ command: 'cat f.txt; echo err >&2; exit 3', workingDirectory: '/workspace/sub' })).toEqual({
        exitCode: 3,
        stdout: 'in sub\n',
        stderr: 'err\n',
      });
      // The session's paths are the command's: /workspace is the workspace in both, as the description says.
      expect(s.description).toContain('Commands see the workspace at /workspace');
      // The runner's own sentence says how commands run, not a location that would contradict the mount path.
      expect(s.description).not.toMatch(/root as \/|in \/work\b|the workspace directory/);
      expect(await s.run({ command: 'pwd; cat /workspace/sub/f.txt; echo new > /workspace/sub/g.txt' })).toEqual({
        exitCode: 0,
        stdout: '/workspace\nin sub\n',
        stderr: '',
      });
      expect(await s.readTextFile({ path: '/workspace/sub/g.txt' })).toBe('new\n');
      const p = await s.spawn({ command: 'cat', stdin: true });
      const w = p.stdin.getWriter();
      await w.write(new TextEncoder().encode('piped'));
      await w.close();
      expect(await new Response(p.stdout).text()).toBe('piped');
      expect((await p.wait()).exitCode).toBe(0);
      const long = await s.spawn({ command: 'sleep 30' });
      await long.kill();
      expect((await long.wait()).exitCode).toBe(137);
      await expect(s.run({ command: 'rm sub/f.txt' })).rejects.toMatchObject({ code: 'EDENIED' });
      expect(await fs.exists('sub/f.txt')).toBe(true);
    } finally {
      await ctx.close();
      await fs.close();
    }
  }, 60_000);

  it("deepagents' execute sees the workspace at the backend's mount path", async () => {
    if (name === 'container' && !docker) throw new Error('no Docker engine: the container backend cannot be tested here');
    const { fs, ctx } = await open(name, { commands: { deny: ['rm *'] } });
    try {
      const mountPath = '/tmp/ctxfs-deepagents/mnt';
      const b = new CtxfsBackend({ context: ctx, runner: frameworkRunner(ctx), mountPath });
      expect(b.description).toContain(`Commands see the workspace at ${mountPath}`);
      await b.write(`${mountPath}/notes.md`, 'written by write\n');
      expect(await b.execute(`cat ${mountPath}/notes.md ${mountPath}/sub/f.txt && printf x > ${mountPath}/sub/x.txt`)).toEqual({
        output: 'written by write\nin sub\n',
        exitCode: 0,
        truncated: false,
      });
      expect((await b.readRaw(`${mountPath}/sub/x.txt`)).data?.content).toBe('x');
      // A command the policy refuses is an answer in deepagents' form, not a rejection, and nothing ran.
      expect(await b.execute(`rm ${mountPath}/sub/f.txt`)).toEqual({ output: expect.stringContaining('EDENIED'), exitCode: 126, truncated: false });
      expect(await fs.exists('sub/f.txt')).toBe(true);
      // Without a mount path the backend's `/` is the root, and commands use relative paths, as its description says.
      const rooted = new CtxfsBackend({ context: ctx, runner: frameworkRunner(ctx) });
      expect(rooted.description).toContain('by relative paths');
      expect((await rooted.execute('cat sub/f.txt')).output).toBe('in sub\n');
    } finally {
      await ctx.close();
      await fs.close();
    }
  }, 60_000);
});
