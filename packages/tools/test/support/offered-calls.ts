/**
 * The calls a result offers a model, found in its text and made as written:
 * each must work.
 *
 * @module
 */

import { expect } from 'vitest';
import type { CallResult } from '../../src/index.ts';
import { TOOLS } from '../../src/index.ts';
import type { TestWorkspace } from '../workspace.ts';
import { callNames, findToolCalls } from './tool-call-text.ts';

const NAMES = callNames(TOOLS);

/** The tool calls written in a text, each as name and arguments; a call of the library's API fails the test. */
export function callsIn(text: string): Array<{ name: string; args: Record<string, unknown> }> {
  return findToolCalls(text, NAMES).flatMap((f) => {
    if (f.kind === 'api-style') throw new Error(`a call of the library, which no tool runs: ${f.source}`);
    return f.kind === 'call' ? [{ name: f.name, args: { ...f.args } }] : [];
  });
}

/** Makes every call the text of `r` names, in `w`; each must work. Their results, in order. */
export async function follow(w: TestWorkspace, r: CallResult): Promise<CallResult[]> {
  const out: CallResult[] = [];
  for (const call of callsIn(r.text)) {
    const done = await w.toolset.run(call.name, call.args);
    expect(done.isError, `${call.name} ${JSON.stringify(call.args)} offered by:\n${r.text}\nanswered:\n${done.text}`).toBe(false);
    out.push(done);
  }
  return out;
}
