import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { type ContextLayer, type ContextSession, createContext } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { nodeTypesText } from './support/node-types.ts';
import { testState } from './support/test-state.ts';

// Real text nobody here wrote: Node's type declarations, repeated past the
// 32 MiB convenience cap of the protocol (and the 16 MiB document limit).
const REAL = nodeTypesText();
const HUGE_TEXT = (() => {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < 40 * 1024 * 1024; i++) {
    const part = `// copy ${i}\n${REAL}\n`;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return parts.join('');
})();
const HUGE_LINES = HUGE_TEXT.split('\n').slice(0, -1);
// One line of a few hundred thousand characters, as a minified bundle is.
const LONG_LINE = REAL.replace(/\s*\n\s*/g, ' ').slice(0, 300_000);

// The same long line as the last line of a file over the document limit, which is streamed.
const STREAMED_LONG = `${HUGE_TEXT.slice(0, 17 * 1024 * 1024).replace(/[^\n]*$/, '')}${LONG_LINE}\n`;
const STREAMED_LONG_LINE = STREAMED_LONG.split('\n').length - 1;

const FILES = { 'logs/huge.d.ts': HUGE_TEXT, 'dist/bundle.min.js': `${LONG_LINE}\n`, 'logs/long-last.log': STREAMED_LONG };

for (const backend of BACKENDS) {
  describe(`large files over ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    let small: ContextSession;
    afterEach(async () => {
      await ctx.close();
      await ws.cleanup();
    });
    async function setup(): Promise<void> {
      ws = await backend.create(FILES);
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
      small = ctx.session({ agent: 'llm:small', profile: 'small' });
    }

    test('readLines serves any range of a 40 MiB file exactly, streamed, versioned by the whole file', { timeout: 120_000 }, async () => {
      await setup();
      const version = createHash('sha256').update(HUGE_TEXT).digest('hex');
      for (const start of [1, 123_457, HUGE_LINES.length - 3]) {
        const r = await small.readLines('logs/huge.d.ts', start, start + 3);
        expect(r.version).toBe(version);
        expect(r.totalLines).toBe(HUGE_LINES.length);
        expect(r.tokens).toBeLessThanOrEqual(1500);
        for (let n = start; n <= Math.min(start + 3, r.endLine ?? start); n++) expect(r.text).toContain(`\n${n}\t${HUGE_LINES[n - 1]}\n`);
      }
    });

    test('readFile and getExcerpt of a file past the cap serve within budget, and their next call works', { timeout: 120_000 }, async () => {
      await setup();
      const r = await small.readFile('logs/huge.d.ts');
      expect(r.view).toBe('narrow');
      expect(r.tokens).toBeLessThanOrEqual(1500);
      expect(r.next).toMatch(/^readLines\("logs\/huge\.d\.ts", 1, \d+\)$/);
      const [, end] = /, 1, (\d+)\)$/.exec(r.next ?? '') ?? [];
      const first = await small.readLines('logs/huge.d.ts', 1, Number(end));
      expect(first.endLine).toBe(Number(end));
      expect(first.tokens).toBeLessThanOrEqual(1500);
      const tail = await small.readFile('logs/huge.d.ts', { strategy: 'end' });
      expect(tail.tokens).toBeLessThanOrEqual(1500);
      expect(tail.text).toContain(`${HUGE_LINES.length}\t${HUGE_LINES.at(-1)}`);
      const head = await small.getExcerpt('logs/huge.d.ts');
      expect(head.text).toContain(`1\t${HUGE_LINES[0]}`);
      expect(head.tokens).toBeLessThanOrEqual(1500);
    });

    test('a line longer than the budget is served in pieces by column, and the pieces join to the line', async () => {
      await setup();
      let got = '';
      let call: { column: number } | undefined = { column: 1 };
      // Followed to the end: a column past the middle of the line once failed as past its end.
      while (call !== undefined) {
        // A session of its own for each piece: the line is more than one session of the small profile may be served.
        const r = await ctx.session({ agent: 'llm:small', profile: 'small' }).readLines('dist/bundle.min.js', 1, 1, { column: call.column });
        expect(r.tokens).toBeLessThanOrEqual(1500);
        got += /\n1\t(.*)\n/.exec(r.text)?.[1] ?? '';
        const next = /^readLines\("dist\/bundle\.min\.js", 1, 1, \{column: (\d+)\}\)$/.exec(r.next ?? '');
        call = next ? { column: Number(next[1]) } : undefined;
      }
      expect(got.length).toBe(LONG_LINE.length);
      expect(got === LONG_LINE).toBe(true);
    });

    test('a streamed long line is read from any column up to its end, and a column past its end is EINVAL', { timeout: 120_000 }, async () => {
      await setup();
      const n = STREAMED_LONG_LINE;
      const column = Math.floor(LONG_LINE.length * 0.75);
      const r = await small.readLines('logs/long-last.log', n, n, { column });
      expect(r.text).toContain(`\n${n}\t${LONG_LINE.slice(column - 1, column + 99)}`);
      expect(r.next).toMatch(/\{column: \d+\}\)$/);
      // Just past the last character: nothing more to read, but not an error.
      await expect(small.readLines('logs/long-last.log', n, n, { column: LONG_LINE.length + 1 })).resolves.toMatchObject({ view: 'lines' });
      await expect(small.readLines('logs/long-last.log', n, n, { column: LONG_LINE.length + 2 })).rejects.toMatchObject({ code: 'EINVAL' });
      await expect(small.readLines('dist/bundle.min.js', 1, 1, { column: LONG_LINE.length + 2 })).rejects.toMatchObject({ code: 'EINVAL' });
    });
  });
}

describe('outlines within a budget', () => {
  // A module of small helpers first and its main class last, as big files often are.
  const helpers = Array.from({ length: 70 }, (_, i) => `export function helper${i}(value: number): number {\n  return value + ${i};\n}\n`).join('\n');
  const methods = Array.from({ length: 90 }, (_, i) => `  method${i}(input: string): string {\n    return input.repeat(${i});\n  }\n`).join('\n');
  const source = `${helpers}\nexport class Engine {\n${methods}}\n\nexport const VERSION = '1';\n`;

  test('every top-level definition is listed before any member, and the notes page through the rest', async () => {
    const ws = await BACKENDS[0]?.create({ 'src/engine.ts': source });
    if (!ws) throw new Error('no backend');
    const ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
    try {
      const small = ctx.session({ agent: 'llm:small', profile: 'small' });
      const o = await small.getOutline('src/engine.ts');
      expect(o.tokens).toBeLessThanOrEqual(1500);
      expect(o.text).toContain('export class Engine');
      expect(o.text).toContain("export const VERSION = '1'");
      // Budget left after the top level goes to Engine's members, the rest counted under it.
      const members = await small.getOutline('src/engine.ts', { symbol: 'Engine' });
      expect(members.tokens).toBeLessThanOrEqual(1500);
      expect(members.text).toContain('method0(input: string): string');
      const listed = [...o.text.matchAll(/^\s*\d+-\d+ /gm)].length;
      expect(listed).toBeGreaterThan(60);
      if (!o.text.includes('method89(')) expect(o.text).toMatch(/more members? \(lines \d+-\d+\) not listed: getOutline\("src\/engine\.ts", \{/);
      // Each note's call works in the same profile.
      for (const m of o.text.matchAll(/getOutline\("src\/engine\.ts", \{(symbol: "[^"]+"|startLine: \d+, endLine: \d+)\}\)/g)) {
        const scope = m[1]?.startsWith('symbol')
          ? { symbol: /"([^"]+)"/.exec(m[1])?.[1] as string }
          : { startLine: Number(/startLine: (\d+)/.exec(m[1] ?? '')?.[1]), endLine: Number(/endLine: (\d+)/.exec(m[1] ?? '')?.[1]) };
        const part = await small.getOutline('src/engine.ts', scope);
        expect(part.tokens).toBeLessThanOrEqual(1500);
        expect(part.view).toBe('outline');
      }
    } finally {
      await ctx.close();
      await ws.cleanup();
    }
  });
});
