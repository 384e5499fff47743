/**
 * `pnpm gen:docs` writes the committed tool list (`tools.json`) from the
 * definitions; the test `packages/mcp/test/tool-list.test.ts` fails when it
 * differs.
 *
 * @module
 */

import { writeFileSync } from 'node:fs';
import { TOOLS } from '@ctxfs/tools';
import { toolList } from './tool-list.ts';

/** The committed file's text. */
export async function toolListJson(): Promise<string> {
  return `${JSON.stringify(await toolList(TOOLS), null, 2)}\n`;
}

if (import.meta.main) {
  const target = new URL('./tools.json', import.meta.url);
  writeFileSync(target, await toolListJson());
  console.log(`wrote ${target.pathname}`);
}
