/**
 * Runs the definitions' example calls, and a few scenes the guide walks
 * through, against the example workspace, and keeps what a reader of the
 * guide should see: the text the model reads, the data, and the audit
 * record each call left.
 *
 * What the guide shows must come out the same on every run, so that a test
 * can compare the committed guide with a fresh one. Content versions and
 * the nonces of the `<file>` delimiters are hashes of the content, and the
 * workspace is fixed, so they are steady. What is not — clock times, change
 * and session ids, MACs, durations, the local user — is replaced by a
 * placeholder naming it (see {@link steady}).
 *
 * @module
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOLS } from '../catalog/index.ts';
import type { AnyToolDefinition } from '../definition.ts';
import { Toolset } from '../dispatch.ts';
import { EXAMPLE_AGENT, type ExampleWorkspace, openExampleWorkspace } from './example-workspace.ts';

/** One call as the guide shows it. */
export interface ShownCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** What the model reads, made steady. */
  readonly text: string;
  /** The structured result, made steady. */
  readonly data: unknown;
  readonly isError: boolean;
}

/** A tool's example calls, run, and the operations they were audited as. */
export interface ToolExamples {
  readonly tool: AnyToolDefinition;
  readonly calls: readonly ShownCall[];
  /** The context-layer operations and their policy classes, as the audit recorded them. */
  readonly audited: ReadonlyArray<{ readonly op: string; readonly opClass: string }>;
}

// Keys whose values differ from run to run, and what the guide writes instead.
const VOLATILE_KEYS: Readonly<Record<string, string>> = {
  ts: '<time>',
  at: '<time>',
  prev: '<mac of the line before>',
  mac: '<mac>',
  requestId: '<request id>',
  sessionId: '<session id>',
  change_id: '<change id>',
  changeId: '<change id>',
  durationMs: '<ms>',
  duration_ms: '<ms>',
  user: '<os user>',
};
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Text with clock times and ids replaced by placeholders. */
export function steadyText(text: string): string {
  return text.replace(ISO_TIME, '<time>').replace(UUID, '<uuid>');
}

/** A value with its volatile fields (by key, and times and ids in any string) replaced by placeholders. */
export function steady(value: unknown): unknown {
  if (typeof value === 'string') return steadyText(value);
  if (Array.isArray(value)) return value.map(steady);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[key] = key in VOLATILE_KEYS ? VOLATILE_KEYS[key] : steady(v);
  }
  return out;
}

async function shown(toolset: Toolset, name: string, args: Readonly<Record<string, unknown>>): Promise<ShownCall> {
  const r = await toolset.run(name, args);
  return { name, arguments: args, text: steadyText(r.text), data: steady(r.data), isError: r.isError };
}

/** The id of the newest audit row, so the rows a call adds can be told apart. */
async function lastAuditId(ws: ExampleWorkspace): Promise<number> {
  return (await ws.ctx.store.auditLog({ limit: 1 }))[0]?.id ?? 0;
}

/**
 * Runs each tool's examples in order, in a fresh example workspace per tool
 * (the examples of one tool may build on each other: the second patch
 * applies to what the first wrote).
 */
export async function runToolExamples(tools: readonly AnyToolDefinition[] = TOOLS): Promise<ToolExamples[]> {
  const out: ToolExamples[] = [];
  for (const tool of tools) {
    const ws = await openExampleWorkspace();
    try {
      const toolset = new Toolset(ws.session);
      const since = await lastAuditId(ws);
      const calls: ShownCall[] = [];
      for (const args of tool.examples as ReadonlyArray<Record<string, unknown>>) calls.push(await shown(toolset, tool.name, args));
      const audited = new Map<string, { op: string; opClass: string }>();
      for (const row of await ws.ctx.store.auditLog({ limit: 1000 })) {
        if (row.id <= since || row.agent !== EXAMPLE_AGENT) continue;
        const opClass = String((row.params as { opClass?: unknown } | undefined)?.opClass);
        audited.set(`${row.op} ${opClass}`, { op: row.op, opClass });
      }
      out.push({ tool, calls, audited: [...audited.values()].reverse() });
    } finally {
      await ws.close();
    }
  }
  return out;
}

/** A scene: calls made one after the other, by one or more agents, in one workspace. */
export interface Scene {
  readonly steps: ReadonlyArray<{ readonly agent: string; readonly call: ShownCall }>;
}

/**
 * Two agents edit src/config.ts: the example agent reads it, another agent
 * changes one line, the example agent's edit of another line is merged, its
 * edit of the same line is refused with the conflict, and after it reads
 * the lines the refusal names, its edit goes through.
 */
export async function conflictScene(): Promise<Scene> {
  const ws = await openExampleWorkspace();
  try {
    const mine = new Toolset(ws.session);
    const other = new Toolset(ws.ctx.session({ agent: 'llm:other', profile: 'small' }));
    const steps: Array<{ agent: string; call: ShownCall }> = [];
    const step = async (toolset: Toolset, name: string, args: Record<string, unknown>): Promise<ShownCall> => {
      const call = await shown(toolset, name, args);
      steps.push({ agent: toolset.session.agent, call });
      return call;
    };
    await step(mine, 'read_lines', { path: 'src/config.ts', start_line: 1, end_line: 12 });
    await step(other, 'replace', { path: 'src/config.ts', old_text: 'const retries = 3;', new_text: 'const retries = 4;', message: 'one more try' });
    await step(mine, 'replace', {
      path: 'src/config.ts',
      old_text: '/** Settings of the sign-in service. */',
      new_text: '/** Settings of the sign-in service, read once at start. */',
    });
    const refused = await step(mine, 'replace', { path: 'src/config.ts', old_text: 'const retries = 3;', new_text: 'const retries = 5;' });
    await step(mine, 'check_conflicts', { path: 'src/config.ts' });
    const next = (refused.data as { next?: unknown }).next;
    const range = typeof next === 'string' ? /"start_line":(\d+),"end_line":(\d+)/.exec(next) : null;
    if (range === null) throw new Error(`the conflict scene expected a refusal naming the lines to read, got: ${refused.text}`);
    await step(mine, 'read_lines', { path: 'src/config.ts', start_line: Number(range[1]), end_line: Number(range[2]) });
    await step(mine, 'replace', { path: 'src/config.ts', old_text: 'const retries = 4;', new_text: 'const retries = 5;' });
    return { steps };
  } finally {
    await ws.close();
  }
}

/** The safety scene: what a model is served when it reaches for credentials, outside the root, or a file that gives orders. */
export async function safetyScene(): Promise<Scene> {
  const ws = await openExampleWorkspace();
  try {
    const mine = new Toolset(ws.session);
    const steps: Array<{ agent: string; call: ShownCall }> = [];
    for (const [name, args] of [
      ['read_file', { path: 'docs/security.md' }],
      ['read_file', { path: 'src/db.ts' }],
      ['read_file', { path: '.env' }],
      ['read_file', { path: '../outside.txt' }],
    ] as const) {
      steps.push({ agent: EXAMPLE_AGENT, call: await shown(mine, name, args) });
    }
    return { steps };
  } finally {
    await ws.close();
  }
}

/** An audited change, as the state store's table and the trail keep it. */
export interface AuditExample {
  readonly call: ShownCall;
  /** The row of the store's `audit` table (`ctx.store.auditLog()`), made steady. */
  readonly row: unknown;
  /** The trail's JSON line, parsed and made steady (key order kept). */
  readonly line: unknown;
}

/** Runs the replace example with an audit trail in a temporary directory, and reads back what it recorded. */
export async function auditExample(): Promise<AuditExample> {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfs-guide-audit-'));
  // A fixed key: the MACs are replaced in the guide anyway, and no key file is left behind.
  const key = new Uint8Array(32).fill(7);
  const ws = await openExampleWorkspace({ auditTrail: { dir: join(dir, 'audit'), key } });
  try {
    const args = { path: 'src/config.ts', old_text: 'const retries = 3;', new_text: 'const retries = 5;', message: 'allow five tries' };
    const call = await shown(new Toolset(ws.session), 'replace', args);
    const row = (await ws.ctx.store.auditLog({ path: 'src/config.ts', limit: 1 }))[0];
    const trail = ws.ctx.auditTrail;
    const record = trail?.query({ path: 'src/config.ts', op: 'replace', limit: 1 })[0];
    if (row === undefined || trail === undefined || record === undefined) throw new Error('the audited replace left no record');
    const text = readFileSync(join(dir, 'audit', record.location.file), 'utf8').split('\n')[record.location.line - 1] ?? '';
    return { call, row: steady({ ...row, id: '<row id>' }), line: steady(JSON.parse(text)) };
  } finally {
    await ws.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
