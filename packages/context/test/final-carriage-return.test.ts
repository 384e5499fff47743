import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ContextLayer, createContext } from '../src/index.ts';
import { BACKENDS, type Workspace } from './backends.ts';
import { nodeTypesText } from './support/node-types.ts';
import { testState } from './support/test-state.ts';

// Real text nobody here wrote (Node's type declarations), past the 16 MiB document limit so that it is streamed.
const REAL = nodeTypesText();
const BIG = (() => {
  const parts: string[] = [];
  let size = 0;
  while (size < 17 * 1024 * 1024) {
    parts.push(REAL);
    size += REAL.length;
  }
  return parts.join('\n');
})();
const LAST = 'export {}; // the last line';

for (const backend of BACKENDS) {
  describe(`a last line ending in a lone CR, ${backend.name}`, () => {
    let ws: Workspace;
    let ctx: ContextLayer;
    beforeAll(async () => {
      ws = await backend.create({ 'small.ts': `const a = 1;\n${LAST}\r`, 'big.ts': `${BIG}\n${LAST}\r` });
      ctx = await createContext({ fs: ws.fs, store: testState(), agent: 'llm:test' });
    }, 120_000);
    afterAll(async () => {
      await ctx?.close();
      await ws?.cleanup();
    });

    test('is served without the CR, loaded whole or streamed', { timeout: 120_000 }, async () => {
      const small = await ctx.readLines('small.ts', 2, 2);
      expect(small.text).toContain(`\n2\t${LAST}\n`);
      const total = BIG.split('\n').length + 1;
      const big = await ctx.readLines('big.ts', total, total);
      expect(big.totalLines).toBe(total);
      expect(big.text).toContain(`\n${total}\t${LAST}\n`);
      expect(big.text).not.toContain('\r');
    });
  });
}
