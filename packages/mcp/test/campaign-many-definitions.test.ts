/**
 * A file with more definitions than a JavaScript call takes arguments
 * (generated code; a minified bundle whose one line declares hundreds of
 * thousands of variables), asked for whole by a model on the small profile.
 * The outline that stands in for its content was built with
 * `Math.max(...rows)` over every definition it left out, which threw
 * "Maximum call stack size exceeded": the model got a JSON-RPC error
 * instead of the outline and the ranges to read. A class of as many
 * members, asked for by name, failed the same way (`Math.min(...members)`).
 *
 * @module
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCallsIn } from './support/hints.ts';
import { type Connected, call, connectStdio } from './support/server.ts';
import { type TempWorkspace, tempWorkspace } from './support/workspace.ts';

/** 150,000 one-line Kotlin functions (2.5 MB): symbols by the regex outline, so the file is quick to index. */
const GENERATED = Array.from({ length: 150_000 }, (_, i) => `fun f${i}() {}`).join('\n');
/** The same functions as members of one class. */
const CLASS = `class Big {\n${Array.from({ length: 150_000 }, (_, i) => `  fun f${i}() {}`).join('\n')}\n}\n`;

let ws: TempWorkspace;
let c: Connected;

beforeAll(async () => {
  ws = tempWorkspace({ 'Generated.kt': GENERATED, 'Big.kt': CLASS });
  c = await connectStdio(['--root', ws.root, '--profile', 'small']);
}, 60_000);
afterAll(async () => {
  await c?.close();
  ws?.remove();
});

describe('a file of 150,000 definitions', () => {
  it('is served as an outline whose next call works', async () => {
    const r = await call(c.client, 'read_file', { path: 'Generated.kt' });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('fun f0()');
    expect(r.text).toMatch(/more definitions \(lines \d+-150000\) not listed/);
    const next = toolCallsIn(r.text).find((h) => h.name === 'get_outline');
    expect(next).toBeDefined();
    const followed = await call(c.client, 'get_outline', next?.args);
    expect(followed.isError).toBe(false);
    expect(followed.text).toContain('fun f');
  }, 60_000);

  it('as members of a class, is listed under it when the class is asked for by name', async () => {
    const r = await call(c.client, 'get_symbol', { path: 'Big.kt', name: 'Big' });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('2-2       fun f0() {}');
    const next = toolCallsIn(r.text).find((h) => h.name === 'get_symbol');
    expect(next?.args).toEqual({ path: 'Big.kt', name: 'Big.f0' });
    expect((await call(c.client, 'get_symbol', next?.args)).text).toContain('fun f0() {}');
  }, 60_000);
});
