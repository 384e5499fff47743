/**
 * Budgets per client. One server, `--client-profile 'tiny-*=small'`: a client
 * that introduces itself as tiny-model gets the small profile (1,500 tokens a
 * call), any other the default. The tiny client asks for a large real file
 * (TypeScript's lib.dom.d.ts, 2.3 MB) every way there is; each answer fits
 * its budget, counted here by tiktoken (OpenAI's own encoder), and every next
 * step the answer names is a call of a tool the client has, with arguments
 * its schema accepts, that works and fits the budget too.
 *
 * @module
 */

import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MODEL_PROFILES } from '@ctxfs/context';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { get_encoding } from 'tiktoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { libraryCallsIn, toolCallsIn } from './support/hints.ts';
import { type Connected, call, type HttpServer, startHttp } from './support/server.ts';
import { libDomPath, type TempWorkspace, tempWorkspace } from './support/workspace.ts';

const o200k = get_encoding('o200k_base');
/** The count of an encoder that is not ours; special-token text counts as text. */
const countTokens = (text: string): number => o200k.encode(text, [], []).length;

const BIG = 'types/lib.dom.d.ts';
const SMALL = MODEL_PROFILES.small.perCallTokens;
const MEDIUM = MODEL_PROFILES.medium.perCallTokens;

/** Every way to ask for the big file, as a model on a small budget would. */
const ASKS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['read_file', { path: BIG }],
  ['get_outline', { path: BIG }],
  ['read_lines', { path: BIG, start_line: 1, end_line: 5000 }],
  ['get_excerpt', { path: BIG }],
  ['grep', { pattern: 'addEventListener', path: 'types' }],
];

let ws: TempWorkspace;
let server: HttpServer;
let tiny: Connected;
let other: Connected;

beforeAll(async () => {
  ws = tempWorkspace({ 'README.md': '# Typings\n' });
  mkdirSync(join(ws.root, 'types'));
  copyFileSync(libDomPath(), join(ws.root, BIG));
  server = await startHttp(['--root', ws.root, '--client-profile', 'tiny-*=small']);
  [tiny, other] = await Promise.all([server.connect({ name: 'tiny-model' }), server.connect({ name: 'claude-code' })]);
});
afterAll(async () => {
  await server?.stop();
  ws?.remove();
});

describe('profiles per client', () => {
  it('gives the client matched by name the small profile and any other the default', async () => {
    expect((await call(tiny.client, 'project_overview')).text).toContain(`profile small, at most ${SMALL} tokens per call`);
    expect((await call(other.client, 'project_overview')).text).toContain(`profile medium, at most ${MEDIUM} tokens per call`);
  });

  it('serves the same range to each within its own budget', async () => {
    const ask = { path: BIG, start_line: 1, end_line: 5000 };
    const [small, medium] = await Promise.all([call(tiny.client, 'read_lines', ask), call(other.client, 'read_lines', ask)]);
    expect(countTokens(small.text)).toBeLessThanOrEqual(SMALL);
    expect(countTokens(medium.text)).toBeLessThanOrEqual(MEDIUM);
    // The default budget is four times the small one: it is used, not just allowed.
    expect(medium.data?.end_line as number).toBeGreaterThan(2 * (small.data?.end_line as number));
  });
});

describe('a large real file on the small budget', () => {
  const validator = new AjvJsonSchemaValidator();
  /** The results of the asks, for the hint checks. */
  const answers = new Map<string, Awaited<ReturnType<typeof call>>>();

  it.each(ASKS)('%s fits the budget, counted by the tokenizer', async (tool, args) => {
    const r = await call(tiny.client, tool, args);
    expect(r.isError, r.text).toBe(false);
    expect(r.data?.tokens as number).toBeLessThanOrEqual(SMALL);
    expect(countTokens(r.text)).toBeLessThanOrEqual(SMALL);
    answers.set(tool, r);
  });

  it('says what was left out: the narrow read names the file size and the ways in', () => {
    const read = answers.get('read_file');
    expect(read?.data).toMatchObject({ view: 'narrow', total_lines: 45125 });
    expect(read?.text).toContain("over this call's budget of 1500 tokens (profile small)");
    expect(answers.get('grep')?.data).toMatchObject({ truncated: true });
  });

  it('names next steps that are calls of the listed tools, with valid arguments, that work within the budget', async () => {
    const followed: string[] = [];
    for (const [tool, r] of answers) {
      // A session of its own for each answer's steps: the small profile's session budget (24k tokens) is for one task.
      const follower = await server.connect({ name: 'tiny-model' });
      const written = [...toolCallsIn(r.text), ...(typeof r.data?.next === 'string' ? toolCallsIn(r.data.next) : [])];
      expect(written.length, `${tool} names no next call`).toBeGreaterThan(0);
      expect(libraryCallsIn(r.text), `${tool} writes a hint as a library call`).toEqual([]);
      for (const hint of written) {
        const listed = tiny.tools.find((t) => t.name === hint.name);
        expect(listed, `${tool} hints at ${hint.text}, a tool the client does not have`).toBeDefined();
        const valid = validator.getValidator(listed?.inputSchema ?? {})(hint.args);
        expect(valid.valid, `${hint.text}: ${valid.errorMessage}`).toBe(true);
        if (followed.includes(hint.text)) continue;
        followed.push(hint.text);
        const next = await call(follower.client, hint.name, hint.args);
        expect(next.isError, `${hint.text}: ${next.text}`).toBe(false);
        expect(countTokens(next.text), hint.text).toBeLessThanOrEqual(SMALL);
      }
    }
    expect(followed.length).toBeGreaterThan(ASKS.length);
  });

  /** A definition over the budget, and a summary, as served (for the hint check after). */
  let symbol: Awaited<ReturnType<typeof call>> | undefined;
  let summary: Awaited<ReturnType<typeof call>> | undefined;

  it('serves a definition over the budget, and a summary, within the budget', async () => {
    const fresh = await server.connect({ name: 'tiny-model' });
    [symbol, summary] = await Promise.all([
      call(fresh.client, 'get_symbol', { path: BIG, name: 'Document' }),
      call(fresh.client, 'summarize_file', { path: BIG }),
    ]);
    expect(symbol.data).toMatchObject({ view: 'symbol', start_line: 12549 });
    expect(symbol.text).toContain('interface Document extends Node');
    expect(summary.data).toMatchObject({ view: 'summary' });
    for (const r of [symbol, summary]) expect(countTokens(r.text)).toBeLessThanOrEqual(SMALL);
  });

  // A symbol's next part and a summary's outline are named as tool calls too, not as calls of the library.
  it('names the next step of a symbol and of a summary as tool calls too', () => {
    expect(symbol?.data?.next).toBeDefined();
    for (const r of [symbol, summary]) expect([...libraryCallsIn(r?.text ?? ''), ...libraryCallsIn(String(r?.data?.next ?? ''))]).toEqual([]);
  });
});
