/**
 * A simulated person edits a file on disk — appending, inserting mid-file,
 * typing on a line, a formatter rewriting the whole file, deleting and
 * recreating it, renaming it — while an agent edits its buffer of the same
 * file and saves now and then, under every permission. Every person's and
 * agent's insertion is a unique token; at each look at the disk and at each
 * save the test checks which tokens the permission says must survive:
 *
 * - read-only: the buffer is the disk.
 * - read-write: every token on disk survives a merge; the agent's do unless
 *   a collision went to the disk.
 * - admin: every token of the buffer survives; the disk's do unless a
 *   collision went to the buffer.
 * - human/partner: nothing is lost without a conflict being shown; while
 *   shown the buffer is left as it was and the disk untouched.
 *
 * A save writes exactly the buffer (after its merge), and CRLF files stay
 * CRLF. Runs: CTXFS_BUFFER_RUNS_MEMORY (default 1,000) and
 * CTXFS_BUFFER_RUNS_HOST (default 200).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BufferInfo, type ContextLayer, createContext, type SyncPermission } from '../src/index.ts';
import { type BackendFactory, hostBackend, memoryBackend, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

type PersonOp =
  | { who: 'person'; kind: 'append' | 'insert' | 'type' | 'format' | 'delete' | 'recreate' | 'rename'; at: number }
  | { who: 'agent'; kind: 'line' | 'inline' | 'save' | 'look'; at: number };

const opArb: fc.Arbitrary<PersonOp> = fc.oneof(
  fc.record({
    who: fc.constant('person' as const),
    kind: fc.constantFrom('append', 'insert', 'type', 'type', 'format', 'delete', 'recreate', 'rename'),
    at: fc.nat(1000),
  }),
  fc.record({ who: fc.constant('agent' as const), kind: fc.constantFrom('line', 'line', 'inline', 'inline', 'save', 'look'), at: fc.nat(1000) }),
);

const PERMISSIONS: readonly SyncPermission[] = ['read-only', 'read-write', 'admin', 'human', 'partner'];

function tokens(text: string | undefined): Set<string> {
  return new Set(text?.match(/[PA]\d+/g) ?? []);
}

function missing(want: Set<string>, have: Set<string>): string[] {
  return [...want].filter((t) => !have.has(t));
}

/** Code-point offset of the start of line `i` (of `n`), or of the end. */
function lineOffset(text: string, i: number): number {
  let n = 0;
  let at = 0;
  for (const ch of text) {
    if (n === i) return at;
    at++;
    if (ch === '\n') n++;
  }
  return at;
}

function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

async function runOnce(ws: Workspace, ctx: ContextLayer, run: number, permission: SyncPermission, crlf: boolean, ops: readonly PersonOp[]): Promise<void> {
  const eol = crlf ? '\r\n' : '\n';
  const dir = `r${run}`;
  let personPath: string | undefined = `${dir}/f.txt`;
  let lastContent = ['alpha  ', '\tbeta', 'gamma', 'delta\t', 'epsilon', 'zeta  '].map((l) => l + eol).join('');
  await ws.external(personPath, lastContent);
  let next = 0;
  const read = async (path: string): Promise<string | undefined> => {
    try {
      return new TextDecoder().decode(await ws.fs.readBytes(path));
    } catch {
      return undefined;
    }
  };
  const b = ctx.buffers;
  let info: BufferInfo = await b.open(`${dir}/f.txt`, { permission });
  const agentPath = () => info.path;
  const fail = (why: string) => {
    throw new Error(`run ${run} ${permission}${crlf ? ' crlf' : ''}: ${why}\nops: ${JSON.stringify(ops)}`);
  };

  /** Looks at the disk through the buffer and checks what the permission promises. */
  const look = async (): Promise<void> => {
    info = (await b.status(agentPath()))[0] as BufferInfo;
    const diskNow = await read(info.path);
    // Nothing changed on disk since the status call's look: the text is what that look merged.
    const after = (await b.text(info.path)).text;
    if (permission === 'read-only' && after !== (diskNow ?? ''))
      fail(`read-only buffer differs from disk: ${JSON.stringify(after)} vs ${JSON.stringify(diskNow)}`);
    if (info.status === 'conflict') return;
    const lostDisk = missing(tokens(diskNow), tokens(after));
    if (lostDisk.length > 0 && permission !== 'admin') fail(`disk tokens lost in the buffer: ${lostDisk.join(',')}`);
  };

  for (const op of ops) {
    if (op.who === 'person') {
      const text: string | undefined = personPath === undefined ? undefined : await read(personPath);
      if (op.kind === 'recreate') {
        if (personPath !== undefined) continue;
        personPath = `${dir}/f.txt`;
        if (await read(personPath)) continue;
        lastContent = `${lastContent}P${next++}${eol}`;
        await ws.external(personPath, lastContent);
        continue;
      }
      if (text === undefined || personPath === undefined) continue;
      let out = text;
      const lines = lineCount(text);
      switch (op.kind) {
        case 'append':
          out = `${text}P${next++}${eol}`;
          break;
        case 'insert': {
          const at = lineOffset(text, Math.floor(lines / 2));
          const cps = [...text];
          out = cps.slice(0, at).join('') + `P${next++}${eol}` + cps.slice(at).join('');
          break;
        }
        case 'type': {
          const parts = text.split(eol);
          const i = op.at % Math.max(1, lines);
          parts[i] = `${parts[i] ?? ''} P${next++}`;
          out = parts.join(eol);
          break;
        }
        case 'format':
          out = text.replace(/[ \t]+(?=\r?\n|$)/g, '').replace(/\t/g, '  ');
          break;
        case 'delete':
          lastContent = text;
          await ws.external(personPath, null);
          personPath = undefined;
          continue;
        case 'rename': {
          const to = `${dir}/g${next++}.txt`;
          await ws.fs.rename(personPath, to);
          personPath = to;
          continue;
        }
      }
      await ws.external(personPath, out);
      continue;
    }
    // The agent.
    if (op.kind === 'look') {
      await look();
      continue;
    }
    if (op.kind === 'save') {
      if (permission === 'read-only') continue;
      await look();
      let saved: Awaited<ReturnType<typeof b.save>>;
      try {
        saved = await b.save(agentPath());
      } catch (err) {
        if ((err as { code?: string }).code !== 'ECONFLICT' || (permission !== 'human' && permission !== 'partner')) throw err;
        // The conflict was shown; the disk is untouched until the agent decides.
        const diskBefore = await read(agentPath());
        expect(await read(agentPath())).toBe(diskBefore);
        const held = tokens((await b.text(agentPath())).text);
        saved = await b.save(agentPath(), { resolve: op.at % 2 === 0 ? 'disk' : 'buffer' });
        const final = tokens(await read(saved.buffer.path));
        if (op.at % 2 === 0 && missing(tokens(diskBefore), final).length > 0) fail('resolve disk lost disk tokens');
        if (op.at % 2 === 1 && missing(held, final).length > 0) fail('resolve buffer lost buffer tokens');
      }
      // A save that found the file renamed since its look followed it: the buffer's path is where it wrote.
      info = saved.buffer;
      const bufferText = (await b.text(agentPath())).text;
      const onDisk = await read(agentPath());
      if (saved.saved || saved.buffer.dirty === false) {
        if ((onDisk ?? '') !== bufferText) fail(`after save the disk ${JSON.stringify(onDisk)} is not the buffer ${JSON.stringify(bufferText)}`);
      } else fail(`save refused: ${saved.edit?.message}`);
      continue;
    }
    if (permission === 'read-only') continue;
    info = (await b.status(agentPath()))[0] as BufferInfo;
    const { text } = await b.text(agentPath());
    const before = tokens(text);
    const n = lineCount(text);
    const token = `A${next++}`;
    if (op.kind === 'line') {
      info = await b.edit(agentPath(), { kind: 'splice', at: lineOffset(text, op.at % (n + 1)), remove: 0, insert: `${token}${eol}` });
    } else {
      const lineStart = lineOffset(text, op.at % Math.max(1, n));
      const lineText = [...text].slice(lineStart).join('').split(eol)[0] ?? '';
      info = await b.edit(agentPath(), { kind: 'splice', at: lineStart + [...lineText].length, remove: 0, insert: ` ${token}` });
    }
    const after = tokens((await b.text(agentPath())).text);
    // The edit's own look may merge a disk change first (admin keeps every buffer token).
    if (permission === 'admin' && missing(before, after).length > 0) fail(`admin buffer lost ${missing(before, after).join(',')}`);
  }
  // The agent settles and saves at the end; then the file holds what the permission promises.
  await look();
  if (permission !== 'read-only') {
    const held = tokens((await b.text(agentPath())).text);
    const disk = await read(agentPath());
    const saved = await b.save(agentPath(), { resolve: 'buffer' });
    // Where the save wrote: a file renamed since the last look is followed.
    const final = await read(saved.buffer.path);
    if (missing(held, tokens(final)).length > 0 && (disk !== undefined || info.dirty)) fail(`final save lost ${missing(held, tokens(final)).join(',')}`);
    if (permission !== 'admin' && info.status !== 'conflict' && missing(tokens(disk), tokens(final)).length > 0) fail(`final save lost disk tokens`);
    void saved;
  } else if ((await b.text(agentPath())).text !== ((await read(agentPath())) ?? '')) fail('read-only buffer is not the disk at the end');
  if (crlf) {
    const final = (await read(agentPath())) ?? '';
    if (/(^|[^\r])\n/.test(final)) fail(`CRLF file got a bare LF: ${JSON.stringify(final)}`);
  }
  await b.close(agentPath(), { discard: true });
}

function suite(backend: BackendFactory, runs: number): void {
  describe(`a person and an agent on one file (${backend.name})`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    beforeAll(async () => {
      ws = await backend.create({});
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a' });
    });
    afterAll(async () => {
      await ctx.close();
      await ws.cleanup();
    });

    it(`keeps every change the permission says must survive (${runs} runs)`, async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...PERMISSIONS), fc.boolean(), fc.array(opArb, { minLength: 4, maxLength: 24 }), async (permission, crlf, ops) => {
          await runOnce(ws, ctx, run++, permission, crlf, ops);
        }),
        { numRuns: runs },
      );
      expect(run).toBeGreaterThanOrEqual(runs);
    }, 600_000);
  });
}

suite(memoryBackend, Number(process.env.CTXFS_BUFFER_RUNS_MEMORY ?? 1000));
suite(hostBackend, Number(process.env.CTXFS_BUFFER_RUNS_HOST ?? 200));
