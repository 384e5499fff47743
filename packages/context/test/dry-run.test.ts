/**
 * An edit's dry run (`dryRun`, apply_patch's `dry_run`): the answer the
 * real call would give — its diff, its merge, its refusal — with nothing
 * written, versioned or asked. On memory and host.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApprovalRequest, type ContextLayer, callbackApprover, createContext, type SafetyOptions } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const FILES: Record<string, string> = {
  'src/a.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n\nexport const d = 4;\nexport const e = 5;\nexport const f = 6;\n',
  'src/old.ts': 'export const old = true;\n',
  'docs/guide.md': '# Guide\n\nRead this.\n',
};

const PATCH = '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n export const a = 1;\n-export const b = 2;\n+export const b = 20;\n export const c = 3;\n';

for (const backend of BACKENDS) {
  describe(`a dry run on ${backend.name}`, () => {
    let ws: Workspace | undefined;
    let ctx: ContextLayer | undefined;
    afterEach(async () => {
      await ctx?.close();
      await ws?.cleanup();
    });

    async function open(safety: SafetyOptions = {}): Promise<{ ws: Workspace; ctx: ContextLayer }> {
      ws = await backend.create(FILES);
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:a', safety: { policyFiles: false, ...safety } });
      return { ws, ctx };
    }

    /** Every file's bytes, hashed: what must not move. */
    async function disk(w: Workspace): Promise<Record<string, string>> {
      const out: Record<string, string> = {};
      for await (const m of w.fs.glob('**/*', { kind: 'file' }))
        out[m.path] = createHash('sha256')
          .update(await w.fs.readBytes(m.path))
          .digest('hex');
      return out;
    }

    it('shows the diff the real call then makes, and writes, versions and records no change', async () => {
      const { ws, ctx } = await open();
      await ctx.readFile('src/a.ts');
      const before = await disk(ws);
      const versions = await ctx.history('src/a.ts');
      const dry = await ctx.applyPatch(PATCH, { dryRun: true });
      expect(dry).toMatchObject({ success: true, dryRun: true, unchanged: false, linesAdded: 1, linesRemoved: 1, seq: undefined });
      expect(dry.message).toBe('Dry run, nothing was written. Applied, it would change src/a.ts: +1 -1 lines.');
      // The version is the file as it is: still the base of the real call.
      expect(dry.version).toBe(before['src/a.ts']);
      expect(await disk(ws)).toEqual(before);
      expect(await ctx.history('src/a.ts')).toEqual(versions);
      await ctx.store.flushAudit();
      const row = (await ctx.store.get<{ params: string; result: string }>("SELECT params, result FROM audit WHERE op = 'applyPatch'")) as {
        params: string;
        result: string;
      };
      expect(row.result).toBe('ok');
      // No versions before and after: a record that says nothing changed.
      expect(JSON.parse(row.params)).toMatchObject({ dryRun: true });
      expect(JSON.parse(row.params).after).toBeUndefined();

      const real = await ctx.applyPatch(PATCH);
      expect(real.success).toBe(true);
      expect(real.diff).toBe(dry.diff);
      expect(real.dryRun).toBeUndefined();
      expect((await ctx.history('src/a.ts')).length).toBe(versions.length + 1);
    });

    it('previews the merge with a change made since the read, and the same refusal the real call gives', async () => {
      const { ws, ctx } = await open();
      await ctx.readFile('src/a.ts');
      await ws.fs.writeBytes('src/a.ts', new TextEncoder().encode((FILES['src/a.ts'] ?? '').replace('f = 6', 'f = 60')));
      const before = await disk(ws);
      const dry = await ctx.applyPatch(PATCH, { dryRun: true });
      expect(dry).toMatchObject({ success: true, merged: true, dryRun: true });
      expect(dry.message).toContain('merged with those changes');
      expect(await disk(ws)).toEqual(before);

      const broken = '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-export const zzz = 9;\n+export const zzz = 10;\n';
      const dryRefusal = await ctx.applyPatch(broken, { dryRun: true });
      const realRefusal = await ctx.applyPatch(broken);
      expect(dryRefusal.success).toBe(false);
      expect({ ...dryRefusal, dryRun: undefined }).toEqual({ ...realRefusal, dryRun: undefined });
      expect(await disk(ws)).toEqual(before);
    });

    it('names each file of a change of several, new, moved and deleted ones; asks no one, and a denial still refuses', async () => {
      const asked: ApprovalRequest[] = [];
      const { ws, ctx } = await open({
        policy: {
          rules: [
            { effect: 'ask', paths: ['src/'] },
            { effect: 'deny', paths: ['docs/'], ops: ['write'] },
          ],
        },
        approver: callbackApprover((r) => {
          asked.push(r);
          return { approved: true };
        }),
      });
      const before = await disk(ws);
      const envelope =
        '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-export const c = 3;\n+export const c = 4;\n*** Add File: src/new.ts\n+export const fresh = 1;\n*** Delete File: src/old.ts\n*** End Patch\n';
      const dry = await ctx.applyPatch(envelope, { dryRun: true });
      expect(dry.success, dry.message).toBe(true);
      expect(dry.message).toBe('Dry run, nothing was written. Applied, it would change src/a.ts, src/new.ts (new), src/old.ts (deleted): +2 -2 lines.');
      expect(dry.files.map((f) => f.path)).toEqual(['src/a.ts', 'src/new.ts', 'src/old.ts']);
      expect(asked).toEqual([]);
      expect(await disk(ws)).toEqual(before);

      const denied = await ctx
        .applyPatch('--- a/docs/guide.md\n+++ b/docs/guide.md\n@@ -3 +3 @@\n-Read this.\n+Read that.\n', { dryRun: true })
        .catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: 'EDENIED' });

      // The real call asks, once, with the same diff the dry run showed.
      const real = await ctx.applyPatch(envelope);
      expect(real.success).toBe(true);
      expect(asked).toHaveLength(1);
      expect(real.diff).toBe(dry.diff);
    });

    it('refuses a dry run of a file open in a buffer, where the edit would go, and leaves the buffer as it was', async () => {
      const { ctx } = await open();
      await ctx.buffers.open('src/a.ts');
      const buffered = await ctx.readFile('src/a.ts');
      const dry = await ctx.applyPatch(PATCH, { dryRun: true });
      expect(dry).toMatchObject({ success: false, code: 'EINVAL' });
      expect(dry.message).toContain('open in a buffer');
      expect((await ctx.readFile('src/a.ts')).text).toBe(buffered.text);
    });
  });
}
