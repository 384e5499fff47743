import { isFsError, resolvePath } from '@ctxfs/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CallOutcome,
  callbackApprover,
  createContext,
  type GuardedCall,
  openGuardedSession,
  openStateStore,
  type SafetyOptions,
  type StateStore,
} from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const FILES: Record<string, string> = {
  'README.md': '# Shop\n',
  'src/cart.ts': 'export const total = 1;\n',
  'vendor/lib.js': 'module.exports = 1;\n',
  'docs/plan.md': 'the plan\n',
  '.env': 'API_TOKEN=tok_live_abcdefghijklmnop\n',
  '.ctxfs/config.toml': '[[policy.rules]]\neffect = "deny"\npaths = ["docs/"]\n',
};

/** The raw reads a command makes, each spelled as a person types it: allowed, sensitive, denied by code, by the project file, asked about, not a path. */
const SPELLINGS = ['src/cart.ts', './src/../src/cart.ts', '.env', 'vendor/lib.js', 'docs/plan.md', 'README.md', '../outside.txt', 'src/missing.ts'];

/** The policy in code; the project file adds its deny of docs/. */
const SAFETY: SafetyOptions = {
  policy: {
    rules: [
      { effect: 'deny', paths: ['vendor/'] },
      { effect: 'ask', paths: ['README.md'], ops: ['read'] },
    ],
  },
  approver: callbackApprover(() => ({ approved: false, reason: 'not now' })),
  policyFiles: { userConfig: false },
};

/** One raw read, as `ctxfs cat --raw` makes it: the spelling resolved first, a bad one recorded and thrown. */
function call(path: string): GuardedCall {
  try {
    return { op: 'readBytes', opClass: 'read', paths: [resolvePath(path, 'readBytes').path], params: { raw: true } };
  } catch (err) {
    if (!isFsError(err)) throw err;
    return { op: 'readBytes', opClass: 'read', paths: [], params: { raw: true }, invalid: err };
  }
}

type Guard = <T>(call: GuardedCall, body: () => Promise<T>, outcome: (result: T) => CallOutcome) => Promise<T>;

/** What each call answered (its bytes' length or its error code), and the audit rows it left, without what differs from run to run. */
async function outcomes(ws: Workspace, store: StateStore, guard: Guard): Promise<{ answers: string[]; rows: unknown[] }> {
  const answers: string[] = [];
  for (const spelling of SPELLINGS) {
    const c = call(spelling);
    try {
      const bytes = await guard(
        c,
        () => ws.fs.readBytes(c.paths[0] ?? ''),
        (b) => ({ result: 'ok', bytes: b.byteLength }),
      );
      answers.push(`${spelling}: ${bytes.byteLength} bytes`);
    } catch (err) {
      answers.push(`${spelling}: ${isFsError(err) ? err.code : String(err)}`);
    }
  }
  await store.flushAudit();
  const rows = (await store.all<Record<string, unknown>>('SELECT op, path, agent, params, result, tokens FROM audit ORDER BY id')).map((r) => {
    const {
      durationMs: _d,
      requestId: _r,
      approval,
      ...params
    } = JSON.parse(String(r.params)) as Record<string, unknown> & {
      approval?: { at?: string };
    };
    const { at: _at, ...decided } = approval ?? {};
    return { ...r, params: { ...params, ...(approval ? { approval: decided } : {}) } };
  });
  return { answers, rows };
}

for (const backend of BACKENDS) {
  describe(`a guarded session over ${backend.name}`, () => {
    const open: Array<{ close(): unknown }> = [];
    let ws: Workspace | undefined;
    afterEach(async () => {
      for (const o of open.splice(0).reverse()) await o.close();
      await ws?.cleanup();
    });

    it('decides and records each call exactly as the context layer does, on the same workspace', async () => {
      ws = await backend.create(FILES);
      // The context layer's answers, on a store of its own.
      const ctxStore = await openStateStore(testState(), { workspace: ws.fs.root });
      open.push(ctxStore);
      const ctx = await createContext({ fs: ws.fs, store: ctxStore, agent: 'llm:a', safety: SAFETY });
      open.push(ctx);
      await ctx.scan();
      const expected = await outcomes(ws, ctxStore, (c, body, outcome) => ctx.guarded(c, body, outcome));

      // The guarded session's, on a store the same scan filled: the registry's sensitivity is what it loads.
      const store = await openStateStore(testState(), { workspace: ws.fs.root });
      open.push(store);
      const scanned = await createContext({ fs: ws.fs, store, safety: { policyFiles: false } });
      await scanned.scan();
      await scanned.close();
      await store.run('DELETE FROM audit');
      const session = await openGuardedSession({ fs: ws.fs, store, agent: 'llm:a', safety: SAFETY });
      open.push(session);
      const got = await outcomes(ws, store, (c, body, outcome) => session.guarded(c, body, outcome));

      expect(got.answers).toEqual(expected.answers);
      expect(got.rows).toEqual(expected.rows);
      expect(got.rows).toHaveLength(SPELLINGS.length);
      // The answers themselves: the policy's, not merely equal.
      expect(got.answers).toEqual([
        `src/cart.ts: ${FILES['src/cart.ts']?.length} bytes`,
        `./src/../src/cart.ts: ${FILES['src/cart.ts']?.length} bytes`,
        '.env: EDENIED',
        'vendor/lib.js: EDENIED',
        'docs/plan.md: EDENIED',
        'README.md: EDENIED',
        '../outside.txt: EPATHESCAPE',
        'src/missing.ts: ENOENT',
      ]);
    });

    it("keeps the session's budgets: a spent one refuses the call, names the budget, and records the refusal", async () => {
      const w = await backend.create(FILES);
      ws = w;
      const store = await openStateStore(testState(), { workspace: w.fs.root });
      open.push(store);
      const session = await openGuardedSession({ fs: w.fs, store, safety: { policyFiles: false, policy: { budgets: { operations: 2 } } } });
      open.push(session);
      const read = () =>
        session.guarded(
          call('src/cart.ts'),
          () => w.fs.readBytes('src/cart.ts'),
          () => ({ result: 'ok' }),
        );
      await read();
      await read();
      const refused = await read().catch((err: unknown) => err);
      expect(isFsError(refused) && refused.code).toBe('ELIMIT');
      expect(String((refused as Error).message)).toMatch(/operations budget is spent: 2 of 2/);
      await store.flushAudit();
      expect((await store.all('SELECT result FROM audit ORDER BY id')).map((r) => r.result)).toEqual(['ok', 'ok', 'denied']);
    });
  });
}
