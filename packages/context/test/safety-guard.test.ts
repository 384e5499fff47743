import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFsError } from '@ctxfs/core';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApprovalRequest, type ContextLayer, callbackApprover, createContext, openStateStore, type SafetyOptions } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const FILES: Record<string, string> = {
  'README.md': '# Shop\n\nThe shop service.\n',
  'src/cart.ts': 'export function total(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0);\n}\n',
  'src/tax.ts': 'export const RATE = 0.2;\n',
  'vendor/lib.js': 'module.exports = 1;\n',
  'secrets/db.txt': 'password=hunter2-very-secret\n',
  '.env': 'API_TOKEN=tok_live_abcdefghijklmnop\n',
};

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function snapshot(ws: Workspace): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of Object.keys(FILES)) out[p] = sha(await ws.fs.readBytes(p).catch(() => new Uint8Array([0xff])));
  for await (const m of ws.fs.glob('**/*', { dot: true, kind: 'file' })) if (!(m.path in out)) out[m.path] = 'extra';
  return out;
}

async function auditCount(ctx: ContextLayer): Promise<number> {
  await ctx.store.flushAudit();
  return ((await ctx.store.get('SELECT COUNT(*) AS n FROM audit')) as { n: number }).n;
}

for (const backend of BACKENDS) {
  describe(`the safety choke point over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    afterEach(async () => {
      ctx?.close();
      await ws?.cleanup();
    });
    async function open(safety: SafetyOptions): Promise<ContextLayer> {
      ws = await backend.create(FILES);
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:claude', safety: { policyFiles: false, ...safety } });
      await ctx.scan();
      return ctx;
    }

    it('every public call leaves exactly one audit record, whatever its outcome', async () => {
      await open({ policy: { rules: [{ effect: 'deny', paths: ['vendor/'] }] } });
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['readFile', () => ctx.readFile('src/cart.ts')],
        ['readLines', () => ctx.readLines('src/cart.ts', 1, 2)],
        ['getExcerpt', () => ctx.getExcerpt('src/cart.ts')],
        ['getSymbol', () => ctx.getSymbol('src/cart.ts', 'total')],
        ['getOutline', () => ctx.getOutline('src/cart.ts')],
        ['getRelatedFiles', () => ctx.getRelatedFiles('src/cart.ts')],
        ['summarize', () => ctx.summarize('src/cart.ts')],
        ['listFiles', () => ctx.listFiles()],
        ['glob', () => ctx.glob('**/*.ts')],
        ['grep', () => ctx.grep('total')],
        ['findSymbol', () => ctx.findSymbol('total')],
        ['writeFile', () => ctx.writeFile('src/new.ts', 'export {};\n')],
        ['createFile', () => ctx.createFile('src/new2.ts', 'export {};\n')],
        ['replace', () => ctx.replace('src/tax.ts', '0.2', '0.25')],
        ['editLines', () => ctx.editLines('src/tax.ts', { kind: 'insert-after', line: 1, text: '// x\n' })],
        ['applyPatch', () => ctx.applyPatch('--- a/src/tax.ts\n+++ b/src/tax.ts\n@@ @@\n-export const RATE = 0.25;\n+export const RATE = 0.3;\n')],
        ['renameFile', () => ctx.renameFile('src/new.ts', 'src/renamed.ts')],
        ['deleteFile', () => ctx.deleteFile('src/renamed.ts')],
        ['checkConflicts', () => ctx.checkConflicts('src/tax.ts')],
        ['history', () => ctx.history('src/tax.ts')],
        ['getVersion', () => ctx.getVersion('src/tax.ts', 1)],
        ['getDiff', () => ctx.getDiff('src/tax.ts', 1, 'current')],
        ['undo', () => ctx.undo('src/tax.ts')],
        ['rollback', () => ctx.rollback('src/tax.ts', 1)],
        ['overview', () => ctx.overview()],
        ['readFile (denied)', () => ctx.readFile('vendor/lib.js')],
        ['writeFile (denied)', () => ctx.writeFile('vendor/lib.js', 'x')],
        ['readFile (missing)', () => ctx.readFile('src/nope.ts')],
        ['readFile (escape)', () => ctx.readFile('../outside.txt')],
        ['replace (refused)', () => ctx.replace('src/cart.ts', 'not there', 'x')],
      ];
      for (const [name, call] of calls) {
        const before = await auditCount(ctx);
        await call().catch(() => undefined);
        expect((await auditCount(ctx)) - before, name).toBe(1);
      }
      const rows = await ctx.store.auditLog({ limit: 500 });
      expect(rows.find((r) => r.op === 'readFile' && r.path === 'vendor/lib.js')?.result).toBe('denied');
      expect(rows.find((r) => r.op === 'replace' && r.result === 'refused')).toBeDefined();
    });

    it('a denied change leaves the disk byte-identical and one denied record', async () => {
      await open({ policy: { readOnly: ['vendor/'], rules: [{ effect: 'deny', paths: ['src/tax.ts'], ops: ['write'] }] } });
      const before = await snapshot(ws);
      await expect(ctx.writeFile('src/tax.ts', 'x')).rejects.toMatchObject({ code: 'EDENIED', path: 'src/tax.ts' });
      await expect(ctx.deleteFile('vendor/lib.js')).rejects.toMatchObject({ code: 'EDENIED', message: expect.stringMatching(/read-only/) });
      // A patch touching an allowed and a denied file changes neither.
      await expect(
        ctx.applyPatch(
          '--- a/src/cart.ts\n+++ b/src/cart.ts\n@@ @@\n-  return items.reduce((a, b) => a + b, 0);\n+  return 0;\n--- a/src/tax.ts\n+++ b/src/tax.ts\n@@ @@\n-export const RATE = 0.2;\n+export const RATE = 0;\n',
        ),
      ).rejects.toMatchObject({ code: 'EDENIED' });
      expect(await snapshot(ws)).toEqual(before);
      expect((await ctx.store.auditLog({ limit: 10 })).map((r) => r.result)).toEqual(['denied', 'denied', 'denied']);
    });

    it('"ask": the person sees every file\'s diff before anything is written; a no or silence leaves the disk as it was', async () => {
      const asked: ApprovalRequest[] = [];
      let answer: 'yes' | 'no' | 'never' = 'no';
      await open({
        policy: { alwaysAsk: ['write', 'delete'], approvalTimeoutMs: 150 },
        approver: callbackApprover((req, signal) => {
          asked.push(req);
          if (answer === 'never') return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
          return { approved: answer === 'yes', approver: 'alice' };
        }, 'test'),
      });
      const before = await snapshot(ws);
      const patch =
        '--- a/src/cart.ts\n+++ b/src/cart.ts\n@@ @@\n-  return items.reduce((a, b) => a + b, 0);\n+  return items.reduce((a, b) => a + b, 1);\n--- a/src/tax.ts\n+++ b/src/tax.ts\n@@ @@\n-export const RATE = 0.2;\n+export const RATE = 0.21;\n';
      const no = await ctx.applyPatch(patch);
      expect(no).toMatchObject({ success: false, code: 'EDENIED' });
      expect(no.message).toMatch(/the user declined/);
      expect(asked[0]?.changes?.map((c) => c.path)).toEqual(['src/cart.ts', 'src/tax.ts']);
      expect(asked[0]?.changes?.[1]?.diff).toContain('+export const RATE = 0.21;');
      answer = 'never';
      const silent = await ctx.deleteFile('src/tax.ts');
      expect(silent).toMatchObject({ success: false, code: 'EDENIED' });
      expect(silent.message).toMatch(/no one approved it in time/);
      expect(await snapshot(ws)).toEqual(before);
      answer = 'yes';
      const yes = await ctx.applyPatch(patch);
      expect(yes.success).toBe(true);
      const records = (await ctx.store.auditLog({ limit: 3 })).reverse();
      expect(records.map((r) => [r.result, (r.params as { approval?: { by: string } }).approval?.by])).toEqual([
        ['denied', 'denied_by_user'],
        ['denied', 'timeout'],
        ['ok', 'user'],
      ]);
      expect((records[2]?.params as { approval?: { approver?: string } } | undefined)?.approval?.approver).toBe('alice');
    });

    it('"ask" holds for a change made outside the editor (a raw byte write through guarded): asked first, with the paths; a call inside an approved one is not asked again', async () => {
      const asked: ApprovalRequest[] = [];
      let answer = false;
      await open({
        policy: { alwaysAsk: ['write', 'delete'] },
        approver: callbackApprover((req) => {
          asked.push(req);
          return { approved: answer, approver: 'alice' };
        }, 'test'),
      });
      const before = await snapshot(ws);
      let ran = 0;
      const write = () =>
        ctx.guarded(
          { op: 'writeBytes', opClass: 'write', paths: ['src/logo.bin'], params: {} },
          async () => {
            ran++;
            await ws.fs.writeBytes('src/logo.bin', Uint8Array.of(0x89, 0x50, 0x4e, 0x47));
          },
          () => ({ result: 'ok' }),
        );
      const refused = await write().catch((e: unknown) => e);
      expect(isFsError(refused, 'EDENIED')).toBe(true);
      expect(ran).toBe(0);
      expect(asked.map((r) => [r.op, r.changes?.map((c) => c.path)])).toEqual([['writeBytes', ['src/logo.bin']]]);
      expect(await snapshot(ws)).toEqual(before);
      answer = true;
      await write();
      expect(ran).toBe(1);
      // A directory's delete asked once for all its files; each file's own delete inside it is not asked again.
      asked.length = 0;
      await ctx.guarded(
        { op: 'delete', opClass: 'delete', paths: ['src', 'src/cart.ts', 'src/tax.ts'], params: { recursive: true } },
        async () => {
          for (const f of ['src/cart.ts', 'src/tax.ts']) expect((await ctx.deleteFile(f)).success).toBe(true);
        },
        () => ({ result: 'ok' }),
      );
      expect(asked.map((r) => r.paths)).toEqual([['src', 'src/cart.ts', 'src/tax.ts']]);
    });

    it('an approver with no one to ask denies as the policy, not as a person', async () => {
      await open({
        policy: { alwaysAsk: ['write'] },
        approver: callbackApprover(() => ({ approved: false, unasked: true, note: 'this client cannot show a question' }), 'headless'),
      });
      const r = await ctx.writeFile('src/tax.ts', 'export const RATE = 0.3;\n');
      expect(r).toMatchObject({ success: false, code: 'EDENIED' });
      expect(r.message).toContain('this client cannot show a question');
      expect(r.message).not.toMatch(/the user declined/);
      const [record] = await ctx.store.auditLog({ limit: 1 });
      expect((record?.params as { approval?: { by: string } } | undefined)?.approval?.by).toBe('policy');
    });

    it("an agent never changes the workspace's own policy on its own: .ctxfs/ asks a person, whatever the rules allow", async () => {
      const escalation = '[[policy.rules]]\neffect = "allow"\npaths = [".env"]\n';
      await open({ policy: { rules: [{ effect: 'allow', paths: ['**'] }] } });
      const before = await snapshot(ws);
      const written = await ctx.writeFile('.ctxfs/config.toml', escalation);
      expect(written).toMatchObject({ success: false, code: 'EDENIED' });
      expect(written.message).toMatch(/\.ctxfs\/.*a person approves every change/);
      expect((await ctx.renameFile('README.md', '.ctxfs/config.toml')).code).toBe('EDENIED');
      expect((await ctx.writeFile('.CTXFS/config.toml', escalation)).code).toBe('EDENIED');
      expect(await snapshot(ws)).toEqual(before);
      // A person who is asked sees the content and may say yes.
      const asked: ApprovalRequest[] = [];
      ctx.close();
      await ws.cleanup();
      await open({
        policy: { rules: [{ effect: 'allow', paths: ['**'] }] },
        approver: callbackApprover((req) => {
          asked.push(req);
          return { approved: true, approver: 'alice' };
        }, 'test'),
      });
      expect((await ctx.writeFile('.ctxfs/config.toml', escalation)).success).toBe(true);
      expect(asked.map((r) => r.changes?.map((c) => c.path))).toEqual([['.ctxfs/config.toml']]);
      expect(asked[0]?.changes?.[0]?.diff).toContain('+paths = [".env"]');
      // Other writes are not asked about.
      expect((await ctx.writeFile('src/tax.ts', 'export const RATE = 0.3;\n')).success).toBe(true);
      expect(asked).toHaveLength(1);
    });

    it('a credentials file is changed only where an allow rule names it, and no diff served shows a secret', async () => {
      await open({});
      const before = await snapshot(ws);
      for (const call of [
        () => ctx.writeFile('.env', 'API_TOKEN=x\n'),
        () => ctx.editLines('.env', { kind: 'insert-after', line: 1, text: '# note\n' }),
        () => ctx.replace('.env', 'API_TOKEN=', 'API_KEY='),
        () => ctx.deleteFile('.env'),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'EDENIED', message: expect.stringMatching(/holds credentials .* changed only where an allow rule names it/) });
        expect(String((err as Error).message)).not.toContain('tok_live');
      }
      expect(await snapshot(ws)).toEqual(before);
      // An ordinary file that holds a secret: the change is made, its diff is served masked, as a read is.
      const secret = 'password = "hunter2-Sup3rS3cret!"';
      const added = await ctx.writeFile('src/config.ts', `export const a = 1;\nconst ${secret};\n`);
      expect(added.success).toBe(true);
      expect(added.diff).not.toContain('hunter2');
      expect(added.diff).toContain('[REDACTED:');
      const edited = await ctx.replace('src/config.ts', 'export const a = 1;', 'export const a = 2;');
      expect(edited.success).toBe(true);
      expect((await ctx.getDiff('src/config.ts', 1, 'current')).diff).not.toContain('hunter2');
      expect(new TextDecoder().decode(await ws.fs.readBytes('src/config.ts'))).toContain('hunter2-Sup3rS3cret!');
    });

    it('without an approver, "ask" is a denial, never a silent approval', async () => {
      await open({ policy: { mode: 'manual' } });
      await expect(ctx.readFile('src/cart.ts')).rejects.toMatchObject({ code: 'EDENIED', message: expect.stringMatching(/no approver is configured/) });
      expect((await ctx.writeFile('src/cart.ts', 'x')).code).toBe('EDENIED');
      expect(new TextDecoder().decode(await ws.fs.readBytes('src/cart.ts'))).toBe(FILES['src/cart.ts']);
    });

    it('a deny-mode session reads, searches and lists nothing it was not allowed to', async () => {
      await open({ policy: { mode: 'deny', rules: [{ effect: 'allow', paths: ['src/'], ops: ['read', 'search'] }] } });
      expect((await ctx.readFile('src/cart.ts')).view).toBe('full');
      for (const denied of ['README.md', 'vendor/lib.js', 'secrets/db.txt', '.env']) {
        await expect(ctx.readFile(denied)).rejects.toMatchObject({ code: 'EDENIED' });
      }
      const grep = await ctx.grep('.', { includeSensitive: true, includeIgnored: true });
      expect(new Set(grep.items.map((h) => h.path))).toEqual(new Set(['src/cart.ts', 'src/tax.ts']));
      expect(grep.text).not.toContain('hunter2');
      const listed = await ctx.listFiles('', { includeIgnored: true });
      expect(listed.items.map((f) => f.path).sort()).toEqual(['src/cart.ts', 'src/tax.ts']);
      expect((await ctx.glob('**/*', { includeIgnored: true })).items.map((f) => f.path).sort()).toEqual(['src/cart.ts', 'src/tax.ts']);
      const overview = await ctx.overview();
      expect(overview.text).not.toContain('The shop service');
      await expect(ctx.writeFile('src/cart.ts', 'x')).rejects.toMatchObject({ code: 'EDENIED', message: expect.stringMatching(/mode is "deny"/) });
    });

    it('"ask" holds for searches: a path asked about is served by a search only under a yes that covers it', async () => {
      const asked: string[] = [];
      let answer = false;
      const approver = callbackApprover((r: ApprovalRequest) => {
        asked.push(r.reason);
        return { approved: answer };
      });
      // A rule: a search of the workspace serves nothing of hr/ (and asks nobody); a search of hr/ is asked about.
      await open({ approver, policy: { rules: [{ effect: 'ask', paths: ['secrets/'], reason: 'db credentials need approval' }] } });
      const hits = await ctx.grep('hunter2');
      expect(hits.items).toEqual([]);
      expect(hits.text).not.toContain('very-secret');
      expect(asked).toEqual([]);
      await expect(ctx.grep('.', { path: 'secrets' })).rejects.toMatchObject({ code: 'EDENIED' });
      expect(asked).toEqual(['db credentials need approval']);
      answer = true;
      expect((await ctx.grep('hunter2', { path: 'secrets' })).items.map((h) => h.path)).toEqual(['secrets/db.txt']);
      ctx.close();
      await ws.cleanup();
      // The mode: a search of the workspace is asked about once; a no serves nothing, a yes serves what the mode guarded.
      asked.length = 0;
      answer = false;
      await open({ approver, policy: { mode: 'manual' } });
      await expect(ctx.grep('total')).rejects.toMatchObject({ code: 'EDENIED' });
      answer = true;
      expect((await ctx.grep('total')).items.map((h) => h.path)).toEqual(['src/cart.ts']);
      expect(asked).toEqual(['every search asks for approval in manual mode', 'every search asks for approval in manual mode']);
    });

    it('sensitive files are denied to reads and searches by default, not merely labelled', async () => {
      await open({});
      await expect(ctx.readFile('.env')).rejects.toMatchObject({ code: 'EDENIED' });
      const hits = await ctx.grep('tok_live', { includeSensitive: true });
      expect(hits.items).toEqual([]);
      expect(hits.text).not.toContain('abcdefghijklmnop');
    });

    it('budgets and the rate limit refuse saying which and when they reset', async () => {
      await open({ policy: { budgets: { operations: 3 } } });
      for (let i = 0; i < 3; i++) await ctx.readLines('src/cart.ts', 1, 1);
      const err = await ctx.readLines('src/cart.ts', 1, 1).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ELIMIT' });
      expect((err as Error).message).toMatch(/operations budget is spent: 3 of 3.*resets with a new session/);
      // Another session has its own budget.
      expect((await ctx.session({ agent: 'llm:b' }).readLines('src/cart.ts', 1, 1)).view).toBe('lines');
      await ctx.close();
      ctx = await createContext({
        fs: ws.fs,
        store: testState(),
        agent: 'llm:a',
        safety: { policyFiles: false, policy: { budgets: { operationsPerMinute: 2, tokens: 100_000 } } },
      });
      await ctx.readLines('src/cart.ts', 1, 1);
      await ctx.readLines('src/cart.ts', 1, 1);
      const rate = await ctx.readLines('src/cart.ts', 1, 1).catch((e: unknown) => e);
      expect((rate as Error).message).toMatch(/rate limit: 2 operations a minute.*resets in \d+ s/);
    });

    it("the policy's token budget caps each call by what is left, and calls run together cannot overshoot it", async () => {
      await open({ policy: { budgets: { tokens: 300 } } });
      const big = `${Array.from({ length: 120 }, (_, i) => `export const value${i} = ${i}; // ${'lorem ipsum '.repeat(4)}`).join('\n')}\n`;
      await ws.fs.write('src/big.ts', big);
      await ctx.scan();
      const one = await ctx.readFile('src/big.ts');
      expect(one.tokens, `${one.view}: ${one.text}`).toBeLessThanOrEqual(300);
      ctx.close();
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:claude', safety: { policyFiles: false, policy: { budgets: { tokens: 300 } } } });
      const together = await Promise.allSettled(Array.from({ length: 6 }, () => ctx.readLines('src/big.ts', 1, 40)));
      const served = together.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(served.reduce((sum, r) => sum + r.tokens, 0)).toBeLessThanOrEqual(300);
      expect(served.length).toBeGreaterThan(0);
      // The rest found the budget set aside by the others: refused as a spent budget is, saying which and what to do.
      const refused = together.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
      expect(refused.length).toBeGreaterThan(0);
      for (const err of refused) {
        expect(err).toMatchObject({ code: 'ELIMIT' });
        expect(err.message).toMatch(/tokens budget leaves \d+ tokens .*resets with a new session/);
      }
    });

    it("a session's budgets hold across the processes that resume it: operations, tokens, bytes and the rate, counted from its records", async () => {
      ws = await backend.create(FILES);
      const store = await openStateStore(testState(), { workspace: ws.fs.root });
      try {
        // Each layer stands for one process (a CLI command) on the same store, resuming one session.
        const layer = (budgets: NonNullable<SafetyOptions['policy']>['budgets'], sessionId?: string) =>
          createContext({ fs: ws.fs, store, agent: 'llm:a', sessionId, safety: { policyFiles: false, policy: { budgets } } });
        const first = await layer({ operations: 3, operationsPerMinute: 100 });
        const id = first.sessionContext.id;
        await first.readLines('src/cart.ts', 1, 1);
        await first.readLines('src/cart.ts', 1, 1);
        await first.close();
        const second = await layer({ operations: 3, operationsPerMinute: 100 }, id);
        await second.readLines('src/cart.ts', 1, 1);
        const spent = await second.readLines('src/cart.ts', 1, 1).catch((e: unknown) => e);
        expect(spent).toMatchObject({ code: 'ELIMIT' });
        expect((spent as Error).message).toMatch(/operations budget is spent: 3 of 3/);
        await second.close();
        // A refusal was not charged: a third process sees the same 3, and a new session has its own.
        const third = await layer({ operations: 3 }, id);
        await expect(third.readLines('src/cart.ts', 1, 1)).rejects.toMatchObject({ code: 'ELIMIT' });
        await third.close();
        const other = await layer({ operations: 3 });
        expect((await other.readLines('src/cart.ts', 1, 1)).view).toBe('lines');
        await other.close();

        // Tokens and bytes: what one process served counts in the next.
        const reader = await layer({ tokens: 1_000_000, bytes: 1_000_000 });
        const sid = reader.sessionContext.id;
        const served = await reader.readFile('src/cart.ts');
        await reader.close();
        const after = await layer({ tokens: served.tokens, bytes: 1_000_000 }, sid);
        await expect(after.readFile('src/tax.ts')).rejects.toMatchObject({ code: 'ELIMIT', message: expect.stringMatching(/tokens budget is spent/) });
        await after.close();
        const bytesAfter = await layer({ bytes: Buffer.byteLength(served.text) }, sid);
        await expect(bytesAfter.readFile('src/tax.ts')).rejects.toMatchObject({ code: 'ELIMIT', message: expect.stringMatching(/bytes budget is spent/) });
        await bytesAfter.close();

        // The rate: the last minute's calls of every process.
        const fast = await layer({ operationsPerMinute: 2 });
        const fid = fast.sessionContext.id;
        await fast.readLines('src/cart.ts', 1, 1);
        await fast.readLines('src/cart.ts', 1, 1);
        await fast.close();
        const again = await layer({ operationsPerMinute: 2 }, fid);
        await expect(again.readLines('src/cart.ts', 1, 1)).rejects.toMatchObject({
          code: 'ELIMIT',
          message: expect.stringMatching(/rate limit: 2 operations a minute.*resets in \d+ s/),
        });
        await again.close();
      } finally {
        await store.close();
      }
    });

    it('hostile paths are refused with a clear error before anything runs', async () => {
      await open({});
      for (const bad of ['src/a.ts; rm -rf /', 'src/$(whoami).ts', 'a|b', 'x`id`']) {
        await expect(ctx.readFile(bad)).rejects.toMatchObject({ code: 'EINVAL', message: expect.stringMatching(/shell metacharacter/) });
      }
      await expect(ctx.readFile('/etc/passwd')).rejects.toMatchObject({ code: 'EPATHESCAPE' });
      // A name with a lone $ is a real file name (Java inner classes), not an injection.
      await ws.fs.write('src/Outer$Inner.java', 'class X {}\n');
      expect((await ctx.readFile('src/Outer$Inner.java')).view).toBe('full');
    });
  });
}

describe('the safety layer on the host', () => {
  /** A host workspace `ws` beside a directory `outside` holding `there.txt`, with `links` (name → target in `outside`) in the workspace. */
  async function beside(links: Record<string, string>, body: (ctx: ContextLayer, base: string) => Promise<void>): Promise<void> {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-safety-'));
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'outside', 'there.txt'), 'top secret\n');
    mkdirSync(join(base, 'ws'));
    for (const [name, target] of Object.entries(links)) symlinkSync(join(base, 'outside', target), join(base, 'ws', name));
    const fs = await HostFilesystem.open({ root: join(base, 'ws'), stateDir: join(base, 'state') });
    const ctx = await createContext({ fs, store: testState(), safety: { policyFiles: false } });
    try {
      await body(ctx, base);
    } finally {
      await ctx.close();
      await fs.close();
      rmSync(base, { recursive: true, force: true });
    }
  }

  it('never tells a model where a symlink out of the workspace leads', () =>
    beside({ 'link.txt': 'there.txt' }, async (ctx, base) => {
      const err = await ctx.readFile('link.txt').catch((e: unknown) => e);
      expect(isFsError(err, 'EPATHESCAPE')).toBe(true);
      expect((err as Error).message).not.toContain(base);
      expect((err as Error).message).not.toContain('outside/there');
      // The local log keeps where it led.
      expect(String(((err as Error).cause as Error | undefined)?.message ?? '')).toContain('there.txt');
    }));

  it('a link out of the workspace answers the same whether its target exists or not: nothing out there is told', () =>
    beside({ 'dangling.txt': 'missing.txt', 'live.txt': 'there.txt' }, async (ctx) => {
      const answer = async (run: (path: string) => Promise<unknown>, path: string) => {
        const err = await run(path).then(
          () => undefined,
          (e: unknown) => e as Error & { code?: string },
        );
        return `${err?.code}: ${String(err?.message).replaceAll(path, '<link>')}`;
      };
      for (const run of [(p: string) => ctx.readFile(p), (p: string) => ctx.readLines(p, 1, 2), (p: string) => ctx.grep('x', { path: p })]) {
        expect(await answer(run, 'dangling.txt')).toBe(await answer(run, 'live.txt'));
      }
      expect(await answer((p) => ctx.readFile(p), 'dangling.txt')).toMatch(/^EPATHESCAPE: /);
      const listed = (await ctx.listFiles()).items.filter((i) => i.path.endsWith('.txt')).map((i) => [i.path, i.kind]);
      expect(listed).toEqual([]);
    }));

  it('a write through a link out of the workspace is refused without saying where the link leads, whether its target exists or not', () =>
    beside({ 'dangling.txt': 'missing.txt', 'live.txt': 'there.txt' }, async (ctx, base) => {
      for (const link of ['dangling.txt', 'live.txt']) {
        const r = await ctx.writeFile(link, 'pwned\n').catch((e: unknown) => ({ success: false, message: String((e as Error).message) }));
        expect(r.success, link).toBe(false);
        expect(r.message, link).not.toContain(base);
      }
      expect(readdirSync(join(base, 'outside')).sort()).toEqual(['there.txt']);
    }));

  it('decides a link inside the workspace as the file it leads to: a link to .env or to a denied directory opens nothing the policy closes', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-safety-'));
    const root = join(base, 'ws');
    mkdirSync(join(root, 'vendor'), { recursive: true });
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, '.env'), 'API_TOKEN=tok_live_abcdefghijklmnop\n');
    writeFileSync(join(root, 'vendor', 'lib.js'), 'module.exports = 1;\n');
    writeFileSync(join(root, 'README.md'), '# Readme\n');
    symlinkSync('.env', join(root, 'notes.txt'));
    symlinkSync('../.env', join(root, 'docs', 'config.txt'));
    symlinkSync('vendor', join(root, 'third_party'));
    symlinkSync('README.md', join(root, 'readme-link.md'));
    symlinkSync('.env.local', join(root, 'later.txt')); // dangling: a write through it would make .env.local
    const fs = await HostFilesystem.open({ root, stateDir: join(base, 'state') });
    const ctx = await createContext({ fs, store: testState(), safety: { policyFiles: false, policy: { rules: [{ effect: 'deny', paths: ['vendor/'] }] } } });
    try {
      await ctx.scan();
      expect(await fs.realpath('notes.txt')).toBe('.env');
      expect(await fs.realpath('third_party/lib.js')).toBe('vendor/lib.js');
      expect(await fs.realpath('later.txt')).toBe('.env.local');
      for (const path of ['notes.txt', 'docs/config.txt', 'third_party/lib.js']) {
        for (const [name, run] of [
          ['readFile', () => ctx.readFile(path)],
          ['readLines', () => ctx.readLines(path, 1, 1)],
          [
            'readBytes',
            () =>
              ctx.guarded(
                { op: 'readBytes', opClass: 'read', paths: [path], params: {} },
                () => fs.readBytes(path),
                () => ({ result: 'ok' }),
              ),
          ],
        ] as const) {
          const err = await run().catch((e: unknown) => e);
          expect(isFsError(err, 'EDENIED'), `${name} ${path}: ${String(err)}`).toBe(true);
          expect((err as Error).message, `${name} ${path}`).toContain(`${path} is a link to`);
        }
        const write = await ctx.writeFile(path, 'pwned\n').catch((e: unknown) => ({ success: false, code: (e as { code?: string }).code }));
        expect(write.success, `write ${path}`).toBe(false);
      }
      const made = await ctx.writeFile('later.txt', 'API_TOKEN=x\n').catch((e: unknown) => ({ success: false, code: (e as { code?: string }).code }));
      expect(made.success).toBe(false);
      expect(readFileSync(join(root, '.env'), 'utf8')).toBe('API_TOKEN=tok_live_abcdefghijklmnop\n');
      expect(readFileSync(join(root, 'vendor', 'lib.js'), 'utf8')).toBe('module.exports = 1;\n');
      expect(existsSync(join(root, '.env.local'))).toBe(false);
      // A link to a file the policy allows reads as the file does.
      expect((await ctx.readFile('readme-link.md')).text).toContain('# Readme');
    } finally {
      await ctx.close();
      await fs.close();
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('reads the project policy file, and a broken one fails the open naming the file and line', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ctxfs-policyfile-'));
    const root = join(base, 'ws');
    mkdirSync(join(root, '.ctxfs'), { recursive: true });
    writeFileSync(join(root, 'a.txt'), 'hello\n');
    writeFileSync(join(root, '.ctxfs/config.toml'), '[policy]\n\n[[policy.rules]]\neffect = "deny"\npaths = ["a.txt"]\n');
    const fs = await HostFilesystem.open({ root, stateDir: join(base, 'state') });
    try {
      const ctx = await createContext({ fs, store: testState(), safety: { policyFiles: { userConfig: false } } });
      await expect(ctx.readFile('a.txt')).rejects.toMatchObject({ code: 'EDENIED' });
      await ctx.close();
      writeFileSync(join(root, '.ctxfs/config.toml'), '[policy]\nmode = "auto"\nreadonly = ["x"]\n');
      await expect(createContext({ fs, store: testState(), safety: { policyFiles: { userConfig: false } } })).rejects.toMatchObject({
        code: 'EINVAL',
        path: '.ctxfs/config.toml',
        message: expect.stringMatching(/line 3: unknown key "readonly"/),
      });
    } finally {
      await fs.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('replay and rollback of a session from the record', () => {
  it.each(BACKENDS.map((b) => [b.name, b] as const))(
    "%s: lists a session's changes and reverts them, refusing where someone changed the same lines since",
    async (_n, backend) => {
      const ws = await backend.create({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'alpha\nbeta\n', 'c.txt': 'x\n' });
      const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'user', safety: { policyFiles: false } });
      try {
        const rogue = ctx.session({ agent: 'llm:rogue' });
        await rogue.readFile('a.txt');
        await rogue.replace('a.txt', 'two', 'TWO');
        await rogue.applyPatch('--- a/b.txt\n+++ b/b.txt\n@@ @@\n-beta\n+BETA\n--- a/c.txt\n+++ b/c.txt\n@@ @@\n-x\n+X\n');
        await rogue.createFile('d.txt', 'new\n');
        // Someone else then edits the line the rogue changed in c.txt.
        await ctx.readFile('c.txt');
        await ctx.replace('c.txt', 'X', 'X and more');
        const changes = await ctx.changesOf({ sessionId: rogue.sessionContext.id });
        expect(changes.map((c) => c.files.map((f) => f.path).sort())).toEqual([['d.txt'], ['b.txt', 'c.txt'], ['a.txt']]);
        expect(changes.every((c) => c.author === 'llm:rogue')).toBe(true);
        expect((await ctx.changesOf({ agent: 'user' })).map((c) => c.files[0]?.path)).toEqual(['c.txt']);
        const results = await ctx.rollbackChanges({ sessionId: rogue.sessionContext.id });
        expect(results.map((r) => [r.path, r.success])).toEqual([
          ['d.txt', true],
          ['b.txt', true],
          ['c.txt', false],
          ['a.txt', true],
        ]);
        const text = async (p: string) => new TextDecoder().decode(await ws.fs.readBytes(p));
        expect(await text('a.txt')).toBe('one\ntwo\nthree\n');
        expect(await text('b.txt')).toBe('alpha\nbeta\n');
        expect(await text('c.txt')).toBe('X and more\n');
        expect(await ws.fs.exists('d.txt')).toBe(false);
        // Each revert is an audited call of its own.
        expect((await ctx.store.auditLog({ limit: 4 })).map((r) => r.op)).toEqual(['undo', 'undo', 'undo', 'undo']);
      } finally {
        await ctx.close();
        await ws.cleanup();
      }
    },
  );
});
