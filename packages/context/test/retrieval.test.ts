import { isFsError } from '@ctxfs/core';
import { afterEach, describe, expect, test } from 'vitest';
import { type ContextLayer, createContext, o200kTokenizer } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { testState } from './support/test-state.ts';

const BIG = Array.from(
  { length: 300 },
  (_, i) => `/** Computes value ${i}. */\nexport function compute${i}(input: number): number {\n  const scaled = input * ${i};\n  return scaled + ${i};\n}\n`,
).join('\n');

const FILES: Record<string, string> = {
  'README.md': '# Demo\n\nA demo workspace.\n\n## Usage\n\nRun `demo`.\n',
  'src/small.ts': "import { helper } from './util/helper.js';\n\n/** Doubles. */\nexport function double(x: number): number {\n  return helper(x) * 2;\n}\n",
  'src/util/helper.ts': 'export function helper(x: number) {\n  return x;\n}\n',
  'src/big.ts': BIG,
  'config/.env': 'DATABASE_URL=postgres://app:Zq8vR2mX9pL4@db.internal:5432/app\nSTRIPE_KEY=sk_live_51HqLyjWDarjtT1zdp7dcXq9bGQ4mZ\n',
};

function lastLineNumbers(text: string): number[] {
  return [...text.matchAll(/^(\d+)\t/gm)].map((m) => Number(m[1]));
}

for (const backend of BACKENDS) {
  describe(`retrieval over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    afterEach(async () => {
      await ctx.close();
      await ws.cleanup();
    });
    async function setup(profile: 'small' | 'large' = 'large') {
      ws = await backend.create(FILES);
      ctx = await createContext({ fs: ws.fs, store: testState(), profile, agent: 'llm:test' });
      await ctx.scan();
      return ctx;
    }

    test('readFile serves a small file whole, delimited and versioned', async () => {
      await setup();
      const r = await ctx.readFile('src/small.ts');
      expect(r.view).toBe('full');
      expect(r.omitted).toEqual([]);
      expect(r.version).toBe(ctx.registry.get('src/small.ts')?.sha256);
      expect(r.text.startsWith('<file path="src/small.ts"')).toBe(true);
      expect(r.text).toContain(FILES['src/small.ts']);
      expect(r.tokens).toBe(o200kTokenizer.count(r.text));
      expect(r.totalLines).toBe(6);
    });

    test("the tokens a result reports are its text's exact count, whatever nonce its delimiters drew (a count is reused across wrappings)", async () => {
      await setup('small');
      for (let i = 0; i < 40; i++) {
        for (const r of [await ctx.readFile('src/small.ts'), await ctx.readLines('src/big.ts', 1 + i, 30 + i), await ctx.getOutline('src/big.ts')]) {
          expect(r.tokens).toBe(o200kTokenizer.count(r.text));
        }
      }
    });

    test.each(['start', 'end', 'middle'] as const)('readFile with strategy %s cuts within maxTokens and says how to get the rest', async (strategy) => {
      await setup();
      for (const maxTokens of [200, 700]) {
        const r = await ctx.readFile('src/big.ts', { maxTokens, strategy });
        expect(r.view).toBe('truncated');
        expect(r.tokens).toBeLessThanOrEqual(maxTokens);
        expect(r.omitted.length).toBeGreaterThan(0);
        for (const o of r.omitted) expect(r.text).toContain(`readLines("src/big.ts", ${o.startLine}, ${o.endLine})`);
        const shown = r.totalLines - r.omitted.reduce((a, o) => a + (o.endLine - o.startLine + 1), 0);
        expect(shown).toBeGreaterThan(0);
        if (strategy === 'start') expect(r.omitted.at(-1)?.endLine).toBe(r.totalLines);
        if (strategy === 'end') expect(r.omitted[0]?.startLine).toBe(1);
        if (strategy === 'middle') {
          expect(r.text).toContain('compute0(');
          expect(r.text).toContain('compute299(');
        }
        expect(r.next).toContain('readLines');
      }
    });

    test('an over-budget read without a strategy returns summary + outline + an instruction to narrow', async () => {
      await setup('small');
      const r = await ctx.readFile('src/big.ts');
      expect(r.view).toBe('narrow');
      expect(r.tokens).toBeLessThanOrEqual(ctx.profile.perCallTokens);
      expect(r.text).toContain("over this call's budget");
      expect(r.text).toContain('Summary:');
      expect(r.text).toContain('Outline:');
      expect(r.text).toMatch(/\d+-\d+\s+export function compute0\(input: number\): number/);
      // Every call offered is concrete: a real definition, a range that fits.
      expect(r.text).toMatch(/getSymbol\("src\/big\.ts", "compute\d+"\)/);
      expect(r.text).toMatch(/readLines\("src\/big\.ts", 1, \d+\)/);
      expect(r.text).not.toContain('const scaled');
    });

    test('readLines numbers lines N\\tline, gives the total and more-above/below markers', async () => {
      await setup();
      const r = await ctx.readLines('src/big.ts', 10, 20, { context: 2 });
      expect(r.view).toBe('lines');
      expect(lastLineNumbers(r.text)).toEqual(Array.from({ length: 15 }, (_, i) => 8 + i));
      const bigLines = BIG.split('\n');
      expect(r.text).toContain(`10\t${bigLines[9]}`);
      expect(r.text).toContain('[… 7 more lines above (1-7) …]');
      expect(r.text).toContain(`more lines below (23-${r.totalLines})`);
      expect(r.text).toContain(`lines="8-22 of ${r.totalLines}"`);
      expect(r.startLine).toBe(8);
      expect(r.endLine).toBe(22);

      const tail = await ctx.readLines('src/small.ts', 5, 999);
      expect(lastLineNumbers(tail.text)).toEqual([5, 6]);
      expect(tail.text).not.toContain('more lines below');

      // One line left out says so in the singular, and its range is one number.
      const middle = await ctx.readLines('src/small.ts', 2, 5);
      expect(middle.text).toContain('[… 1 more line above (1) …]');
      expect(middle.text).toContain('[… 1 more line below (6) …]');

      const err = await ctx.readLines('src/small.ts', 0, 3).catch((e: unknown) => e);
      expect(isFsError(err, 'EINVAL')).toBe(true);
      const past = await ctx.readLines('src/small.ts', 50, 60).catch((e: unknown) => e);
      expect(isFsError(past, 'EINVAL') && past.message).toContain('6 lines');
    });

    test('readLines over budget serves what fits and says where to continue', async () => {
      await setup();
      const r = await ctx.readLines('src/big.ts', 1, 1000, { maxTokens: 300 });
      expect(r.tokens).toBeLessThanOrEqual(300);
      const nums = lastLineNumbers(r.text);
      const last = nums.at(-1) as number;
      expect(r.omitted).toEqual([expect.objectContaining({ startLine: last + 1, endLine: 1000 })]);
      expect(r.next).toBe(`readLines("src/big.ts", ${last + 1}, 1000)`);
      expect(r.text).toContain(`more lines below (1001-${r.totalLines})`);
    });

    test('getExcerpt shows the head numbered, with what lies below', async () => {
      await setup();
      const r = await ctx.getExcerpt('src/big.ts', 12);
      expect(lastLineNumbers(r.text)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(r.text).toMatch(/more lines below \(13-\d+\)/);
      expect(r.text).toContain('getOutline("src/big.ts")');
    });

    test('getSymbol returns one definition with its doc comment; unknown names fail with suggestions', async () => {
      await setup();
      const r = await ctx.getSymbol('src/big.ts', 'compute150');
      expect(r.view).toBe('symbol');
      expect(r.text).toContain('/** Computes value 150. */');
      expect(r.text).toContain('export function compute150(input: number): number {');
      expect(r.text).toContain('return scaled + 150;');
      expect(r.text).not.toContain('compute151');
      expect([r.startLine, r.endLine]).toEqual([r.startLine, (r.startLine ?? 0) + 4]);

      const err = await ctx.getSymbol('src/big.ts', 'compute15O').catch((e: unknown) => e);
      expect(isFsError(err, 'ENOENT')).toBe(true);
      expect((err as { hint: string }).hint).toContain("'compute150'");
    });

    test('getSymbol on markdown sections', async () => {
      await setup();
      const r = await ctx.getSymbol('README.md', 'Usage');
      expect(r.text).toContain('## Usage');
      expect(r.text).toContain('Run `demo`.');
    });

    test('getOutline lists symbols with ranges, bodies elided, and shrinks to a budget', async () => {
      await setup();
      const r = await ctx.getOutline('src/big.ts');
      expect(r.view).toBe('outline');
      expect(r.text).toContain('2-5       export function compute0(input: number): number');
      expect(r.text).not.toContain('const scaled');
      const small = await ctx.getOutline('src/big.ts', { maxTokens: 200 });
      expect(small.tokens).toBeLessThanOrEqual(200);
      expect(small.text).toMatch(/… \d+ more definitions \(lines \d+-1799\) not listed: getOutline\("src\/big\.ts", \{startLine: \d+, endLine: 1799\}\)/);
      const rest = await ctx.getOutline('src/big.ts', { maxTokens: 200, startLine: Number(/startLine: (\d+)/.exec(small.next ?? '')?.[1]), endLine: 1799 });
      expect(rest.tokens).toBeLessThanOrEqual(200);
      expect(rest.text).not.toContain('compute0(');
    });

    test('getRelatedFiles follows imports (resolving .js to .ts) and reports importers once indexed', async () => {
      await setup();
      const r = await ctx.getRelatedFiles('src/small.ts');
      expect(r.related).toEqual([expect.objectContaining({ path: 'src/util/helper.ts', relation: 'imports', depth: 1 })]);
      await ctx.indexRelations();
      const back = await ctx.getRelatedFiles('src/util/helper.ts');
      expect(back.related).toEqual([expect.objectContaining({ path: 'src/small.ts', relation: 'imported-by' })]);
    });

    test('a sensitive file is denied by default; where a rule allows it, secrets are redacted in every view and it is marked', async () => {
      await setup();
      expect(ctx.registry.get('config/.env')?.sensitive).toBe(true);
      for (const read of [() => ctx.readFile('config/.env'), () => ctx.readLines('config/.env', 1, 2), () => ctx.getExcerpt('config/.env')]) {
        await expect(read()).rejects.toMatchObject({ code: 'EDENIED', path: 'config/.env' });
      }
      await ctx.close();
      ctx = await createContext({
        fs: ws.fs,
        store: testState(),
        agent: 'llm:test',
        safety: { policyFiles: false, policy: { rules: [{ effect: 'allow', paths: ['config/.env'], ops: ['read'] }] } },
      });
      await ctx.scan();
      for (const r of [await ctx.readFile('config/.env'), await ctx.readLines('config/.env', 1, 2), await ctx.getExcerpt('config/.env')]) {
        expect(r.text).not.toContain('Zq8vR2mX9pL4');
        expect(r.text).not.toContain('sk_live_51HqLyjWDarjtT1zdp7dcXq9bGQ4mZ');
        expect(r.text).toContain('[REDACTED:');
        expect(r.text).toContain('sensitive="true"');
        expect(r.redactions).toBe(2);
      }
    });

    test('reads refresh the registry when the file changed behind ctxfs, and the new version is served', async () => {
      await setup();
      const before = await ctx.readFile('src/small.ts');
      await ws.external('src/small.ts', `${FILES['src/small.ts']}// edited elsewhere\n`);
      const after = await ctx.readFile('src/small.ts');
      expect(after.version).not.toBe(before.version);
      expect(after.text).toContain('// edited elsewhere');
      expect(ctx.registry.get('src/small.ts')).toMatchObject({ version: 2, sha256: after.version });
      expect((await ctx.registry.versions('src/small.ts', 1))[0]?.author).toBe('external');
    });

    test('missing files and directories fail with protocol errors', async () => {
      await setup();
      expect(isFsError(await ctx.readFile('nope.ts').catch((e: unknown) => e), 'ENOENT')).toBe(true);
      expect(isFsError(await ctx.readFile('src').catch((e: unknown) => e), 'EISDIR')).toBe(true);
    });
  });
}
