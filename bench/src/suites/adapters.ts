/**
 * The framework adapters (issue 20) beside each framework's own local
 * backend, on the same real tree (a copy of `packages/context/src`, about
 * 130 TypeScript files), ctxfs with its stale detection and audit on (every
 * call through a context session, recorded in the state store's audit):
 *
 * - deepagents: `CtxfsBackend` over the host backend against deepagents'
 *   `FilesystemBackend` (virtual mode): read, edit, grep, glob; goal ≤ 1.2x;
 * - Mastra: `CtxfsWorkspaceFilesystem` against Mastra's `LocalFilesystem`:
 *   read, edit (read, stat, write with `expectedMtime`, as Mastra's edit
 *   tool does), and Mastra's own grep and list-files tools over each;
 *   goal ≤ 1.2x;
 * - each edit twice: ctxfs durable (the host's default `durability: 'full'`,
 *   the journal's intent flushed) and at like durability (`durability:
 *   'none'`, which the journal follows: nothing flushed, as neither
 *   framework's own backend flushes);
 * - AI SDK session: `readTextFile` of lines 1,000–1,100 of a 100 MB file:
 *   under 50 ms, under 16 MiB retained.
 *
 * @module
 */

import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSandboxSession } from '@ctxfs/adapters/ai-sdk';
import { CtxfsBackend } from '@ctxfs/adapters/deepagents';
import { CtxfsWorkspaceFilesystem } from '@ctxfs/adapters/mastra';
import { type ContextLayer, createContext } from '@ctxfs/context';
import { HostFilesystem } from '@ctxfs/host';
import { createWorkspaceTools, LocalFilesystem, Workspace, type WorkspaceFilesystem } from '@mastra/core/workspace';
import { FilesystemBackend } from 'deepagents';
import { type Case, defineSuite, single } from '../harness.ts';

const SOURCE = fileURLToPath(new URL('../../../packages/context/src', import.meta.url));
const EDITED = 'context-layer.ts';
const MARKER = ['// bench marker A', '// bench marker B'] as const;

interface Side {
  readonly dir: string;
}

interface Env {
  readonly dirs: string[];
  readonly plain: Side;
  readonly ctxRoot: Side;
  readonly host: HostFilesystem;
  readonly context: ContextLayer;
  /** The same, at the frameworks' durability: no fsync of the files, so none of the journal's intent either. */
  readonly likeHost: HostFilesystem;
  readonly likeContext: ContextLayer;
  readonly bigDir: string;
  readonly bigHost: HostFilesystem;
  readonly bigContext: ContextLayer;
}

function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-bench-adapters-'));
  cpSync(SOURCE, dir, { recursive: true });
  writeFileSync(join(dir, EDITED), `${MARKER[0]}\n`, { flag: 'a' });
  return dir;
}

/** A toggling edit: the marker goes A → B, then B → A, so every call changes the file. */
function toggler(edit: (from: string, to: string) => Promise<unknown>): () => Promise<unknown> {
  let i = 0;
  return () => {
    const from = MARKER[i % 2] as string;
    const to = MARKER[(i + 1) % 2] as string;
    i++;
    return edit(from, to);
  };
}

export default defineSuite<Env>({
  name: 'adapters',
  description: 'deepagents and Mastra over ctxfs host vs their own local backends; the AI SDK session reading a range of a 100 MB file',
  options: { rounds: 2, minSamples: 10, timeMs: 300 },
  async setup() {
    const plainDir = copyTree();
    const ctxDir = copyTree();
    const state = mkdtempSync(join(tmpdir(), 'ctxfs-bench-adapters-state-'));
    const host = await HostFilesystem.open({
      root: ctxDir,
      stateDir: join(state, 'host'),
      durability: (process.env.CTXFS_BENCH_DURABILITY as 'full' | 'file' | 'none' | undefined) ?? 'full',
    });
    const context = await createContext({ fs: host, store: join(state, 'state.db'), agent: 'bench', safety: { policyFiles: false } });
    const likeDir = copyTree();
    const likeHost = await HostFilesystem.open({ root: likeDir, stateDir: join(state, 'like'), durability: 'none' });
    const likeContext = await createContext({ fs: likeHost, store: join(state, 'like.db'), agent: 'bench', safety: { policyFiles: false } });
    const bigDir = mkdtempSync(join(tmpdir(), 'ctxfs-bench-adapters-big-'));
    const line = `${'x'.repeat(99)}\n`;
    writeFileSync(join(bigDir, 'big.log'), line.repeat(1_000_000)); // 100 MB, 1,000,000 lines
    const bigHost = await HostFilesystem.open({ root: bigDir, stateDir: join(state, 'big') });
    const bigContext = await createContext({ fs: bigHost, store: join(state, 'big.db'), agent: 'bench', safety: { policyFiles: false } });
    return {
      dirs: [plainDir, ctxDir, likeDir, state, bigDir],
      plain: { dir: plainDir },
      ctxRoot: { dir: ctxDir },
      host,
      context,
      likeHost,
      likeContext,
      bigDir,
      bigHost,
      bigContext,
    };
  },
  async teardown(env) {
    await env.context.close();
    await env.likeContext.close();
    await env.likeHost.close();
    await env.bigContext.close();
    await env.host.close();
    await env.bigHost.close();
    for (const d of env.dirs) rmSync(d, { recursive: true, force: true });
  },
  cases: async (env) => {
    const theirs = new FilesystemBackend({ rootDir: env.plain.dir, virtualMode: true });
    const ours = new CtxfsBackend({ context: env.context });
    const oursLike = new CtxfsBackend({ context: env.likeContext });
    const local = new LocalFilesystem({ basePath: env.plain.dir });
    await local.init();
    const mastra = new CtxfsWorkspaceFilesystem({ context: env.context });
    const mastraLike = new CtxfsWorkspaceFilesystem({ context: env.likeContext });
    const localWs = new Workspace({ filesystem: local });
    const ctxWs = new Workspace({ filesystem: mastra });
    await localWs.init();
    await ctxWs.init();
    const mastraEdit = (fs: WorkspaceFilesystem) =>
      toggler(async (from, to) => {
        const text = (await fs.readFile(EDITED, { encoding: 'utf8' })) as string;
        const { modifiedAt } = await fs.stat(EDITED);
        await fs.writeFile(EDITED, text.replace(from, to), { expectedMtime: modifiedAt });
      });
    type ToolSet = Record<string, { execute: (input: unknown, context: unknown) => Promise<unknown> }>;
    const localTools = (await createWorkspaceTools(localWs)) as ToolSet;
    const ctxTools = (await createWorkspaceTools(ctxWs)) as ToolSet;
    const tool = (id: string, input: Record<string, unknown>, workspace: Workspace) => () =>
      ((workspace === ctxWs ? ctxTools : localTools)[id] as ToolSet[string]).execute(input, { workspace });
    const grepTool = 'mastra_workspace_grep';
    const listFilesTool = 'mastra_workspace_list_files';
    const sameLength = async (a: () => Promise<unknown>, b: () => Promise<unknown>, what: string) => {
      const [x, y] = [JSON.stringify(await a()), JSON.stringify(await b())];
      if (x.length === 0 || y.length === 0) throw new Error(`${what}: an empty answer`);
    };
    const sandbox = createSandboxSession({ context: env.bigContext });
    const cases: Case[] = [
      {
        name: 'deepagents read (500 lines)',
        subject: () => ours.read(`/${EDITED}`),
        baseline: () => theirs.read(`/${EDITED}`),
        baselineName: 'deepagents FilesystemBackend',
        target: { maxRatio: 1.2 },
        verify: async () => {
          if ((await ours.read(`/${EDITED}`)).content !== (await theirs.read(`/${EDITED}`)).content) throw new Error('read differs');
        },
      },
      {
        name: 'deepagents edit (one occurrence)',
        subject: toggler((a, b) => ours.edit(`/${EDITED}`, a, b)),
        baseline: toggler((a, b) => theirs.edit(`/${EDITED}`, a, b)),
        baselineName: 'deepagents FilesystemBackend',
        target: { maxRatio: 1.2 },
        batch: 1,
        note: 'ctxfs: a session edit — stale check by hash, journal, version, registry, audit record, durable atomic write',
      },
      {
        name: 'deepagents edit, like durability (host durability none)',
        subject: toggler((a, b) => oursLike.edit(`/${EDITED}`, a, b)),
        baseline: toggler((a, b) => theirs.edit(`/${EDITED}`, a, b)),
        baselineName: 'deepagents FilesystemBackend',
        target: { maxRatio: 1.2 },
        batch: 1,
        note: 'the same edit with no fsync (neither the file nor the journal intent), as deepagents writes',
      },
      {
        name: 'deepagents grep (literal)',
        subject: () => ours.grep('export function', '/'),
        baseline: () => theirs.grep('export function', '/'),
        baselineName: 'deepagents FilesystemBackend',
        target: { maxRatio: 1.2 },
        batch: 1,
        verify: async () => {
          const [a, b] = [(await ours.grep('export function', '/')).matches?.length, (await theirs.grep('export function', '/')).matches?.length];
          if (a !== b) throw new Error(`grep: ${a} matches vs ${b}`);
        },
      },
      {
        name: 'deepagents glob **/*.ts',
        subject: () => ours.glob('**/*.ts', '/'),
        baseline: () => theirs.glob('**/*.ts', '/'),
        baselineName: 'deepagents FilesystemBackend',
        target: { maxRatio: 1.2 },
        batch: 1,
        verify: async () => {
          const [a, b] = [(await ours.glob('**/*.ts', '/')).files?.length, (await theirs.glob('**/*.ts', '/')).files?.length];
          if (a !== b) throw new Error(`glob: ${a} files vs ${b}`);
        },
      },
      {
        name: 'Mastra readFile',
        subject: () => mastra.readFile(EDITED, { encoding: 'utf8' }),
        baseline: () => local.readFile(EDITED, { encoding: 'utf8' }),
        baselineName: 'Mastra LocalFilesystem',
        target: { maxRatio: 1.2 },
      },
      {
        name: 'Mastra edit (read, stat, write with expectedMtime)',
        subject: mastraEdit(mastra),
        baseline: mastraEdit(local),
        baselineName: 'Mastra LocalFilesystem',
        target: { maxRatio: 1.2 },
        batch: 1,
      },
      {
        name: 'Mastra edit, like durability (host durability none)',
        subject: mastraEdit(mastraLike),
        baseline: mastraEdit(local),
        baselineName: 'Mastra LocalFilesystem',
        target: { maxRatio: 1.2 },
        batch: 1,
        note: 'the same edit with no fsync (neither the file nor the journal intent), as LocalFilesystem writes',
      },
      {
        name: 'Mastra grep tool',
        subject: tool(grepTool, { pattern: 'export function', path: '.' }, ctxWs),
        baseline: tool(grepTool, { pattern: 'export function', path: '.' }, localWs),
        baselineName: 'Mastra LocalFilesystem',
        target: { maxRatio: 1.2 },
        batch: 1,
        verify: () =>
          sameLength(
            tool(grepTool, { pattern: 'export function', path: '.' }, ctxWs),
            tool(grepTool, { pattern: 'export function', path: '.' }, localWs),
            'grep',
          ),
        note: 'ctxfs answers through its native grep (ripgrep); LocalFilesystem has none, so the tool walks and reads',
      },
      {
        name: 'Mastra list-files tool, pattern **/*.ts',
        subject: tool(listFilesTool, { path: '.', pattern: '**/*.ts', maxDepth: 10 }, ctxWs),
        baseline: tool(listFilesTool, { path: '.', pattern: '**/*.ts', maxDepth: 10 }, localWs),
        baselineName: 'Mastra LocalFilesystem',
        target: { maxRatio: 1.2 },
        batch: 1,
        note: 'ctxfs answers through its native walk; LocalFilesystem is listed a directory at a time',
      },
      single({
        kind: 'single',
        name: 'AI SDK readTextFile lines 1,000–1,100 of a 100 MB file (host)',
        run: async () => {
          const text = await sandbox.readTextFile({ path: 'big.log', startLine: 1000, endLine: 1100 });
          if (text?.split('\n').length !== 101) throw new Error('expected 101 lines');
          return text;
        },
        budget: { maxMs: 50, maxBytes: 16 * 1024 * 1024 },
      }),
    ];
    return cases;
  },
});
