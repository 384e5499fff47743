/**
 * Commands as tools: `run_command` runs a shell command in the workspace on
 * any backend (the container's shell, bubblewrap on the host, just-bash in
 * memory), decided by the policy's command rules; `read_command_output`
 * reads, by line range, an output too large for the call that produced it.
 *
 * @module
 */

import type { CommandResult, CommandRunner } from '@ctxfs/commands';
import { type ContextSession, o200kTokenizer } from '@ctxfs/context';
import { z } from 'zod';
import { toolCallText } from '../call-style.ts';
import { DESTRUCTIVE, defineTool, READ_ONLY } from '../definition.ts';
import { callBudget } from '../results.ts';

/** Tokens a result keeps for its own lines (header, markers, the next call). */
const FRAME_TOKENS = 120;
/** A line longer than this many characters is cut in a preview or a page (and the cut is said). */
const MAX_LINE_CHARS = 1000;

// The runner brings the container backend, just-bash and the engines' clients
// (dockerode, ssh2, gRPC): loaded by the first command, not by every tool set.
const commands = (): Promise<typeof import('@ctxfs/commands')> => import('@ctxfs/commands');

const runners = new WeakMap<ContextSession, CommandRunner>();

async function runnerOf(session: ContextSession): Promise<CommandRunner> {
  let r = runners.get(session);
  if (r === undefined) {
    r = new (await commands()).CommandRunner(session);
    runners.set(session, r);
  }
  return r;
}

/** The output as one numbered-line text: stdout, then stderr under its own marker. */
function outputLines(r: CommandResult): string[] {
  const split = (s: string): string[] => {
    const lines = s.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines;
  };
  const out = split(r.stdout);
  const err = split(r.stderr);
  return err.length === 0 ? out : [...out, '[stderr]', ...err];
}

function numbered(lines: readonly string[], first: number): string[] {
  return lines.map(
    (l, i) => `${first + i}\t${l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS)}[… line cut at ${MAX_LINE_CHARS} of ${l.length} characters]` : l}`,
  );
}

/** As many lines from the start of `lines` as fit in `budget` tokens. */
function fitting(lines: readonly string[], budget: number): number {
  let used = 0;
  let n = 0;
  for (const l of lines) {
    const t = o200kTokenizer.count(l) + 1;
    if (used + t > budget) break;
    used += t;
    n++;
  }
  return n;
}

function headline(r: CommandResult): string {
  const status = r.exitCode === null ? (r.aborted ? 'stopped (cancelled)' : 'stopped') : `exit ${r.exitCode}`;
  const parts = [`$ ${r.command}`, `${status} (${r.runner})`];
  for (const l of r.limits) parts.push(`limit hit: ${l.limit}: ${l.detail}`);
  if (r.changes.length > 0) parts.push(`changed: ${r.changes.map((c) => `${c.path} (#${c.seq}, undo reverts it)`).join(', ')}`);
  return parts.join('\n');
}

const resultData = () =>
  z.object({
    command: z.string(),
    exit_code: z.number().int().nullable().describe('null when the command was stopped (a limit, or cancelled).'),
    runner: z.string().describe('just-bash, bubblewrap, container or unconfined.'),
    duration_ms: z.number().int(),
    stdout_bytes: z.number().int(),
    stderr_bytes: z.number().int(),
    limits: z
      .array(z.object({ limit: z.string(), detail: z.string() }))
      .describe('Limits hit (time, output; on just-bash also memory and work); empty when none.'),
    changes: z.array(z.object({ path: z.string(), seq: z.number().int() })).describe('Files the command changed, recorded in history (just-bash).'),
    output_id: z.string().optional().describe('Set when the output was over the budget: read the rest with read_command_output.'),
    total_lines: z.number().int(),
    shown_lines: z.array(z.object({ start_line: z.number().int(), end_line: z.number().int() })),
    next: z.string().optional(),
  });

export const runCommand = defineTool({
  name: 'run_command',
  title: 'Run a command',
  description:
    "Runs a shell command in the workspace (sh -c; in a memory workspace, a bash interpreter over the same files) and returns its exit status and output. Where it runs: a container workspace's container; a host workspace's directory, confined (the system read-only, no network); in memory, just-bash. The workspace policy's command rules decide whether it runs (or asks a person). Output over the call's budget is kept: the result shows its first and last lines and the read_command_output call for the rest. A limit that stopped the command (time, output; on just-bash memory and work) is stated in the result. Prefer the file tools to read, search and edit; use this to build, test and run programs.",
  input: () =>
    z.object({
      command: z.string().min(1).describe('The command line, e.g. "npm test -- --run" or "ls -la src".'),
      cwd: z.string().optional().describe('Working directory, relative to the workspace root; default the root.'),
      timeout_seconds: z.number().min(1).max(3600).optional().describe('Time limit; default the policy’s (60 s).'),
      stdin: z.string().optional().describe('Text for the standard input.'),
      max_tokens: z.number().int().min(1).optional(),
    }),
  output: resultData,
  annotations: DESTRUCTIVE,
  approval: 'policy',
  api: { op: 'runCommand', args: ['command'] },
  examples: [
    { command: 'grep -c export *.ts', cwd: 'src' },
    { command: 'npm test', timeout_seconds: 300 },
    { command: 'wc -l', stdin: 'one\ntwo\n' },
  ],
  async run(session, a, context) {
    const r = await (await runnerOf(session)).run(a.command, {
      cwd: a.cwd,
      timeoutMs: a.timeout_seconds === undefined ? undefined : a.timeout_seconds * 1000,
      stdin: a.stdin,
      signal: context.signal,
    });
    const head = headline(r);
    const lines = outputLines(r);
    const budget = callBudget(session, a.max_tokens);
    const room = Math.max(64, budget - FRAME_TOKENS - o200kTokenizer.count(head));
    const data = {
      command: r.command,
      exit_code: r.exitCode,
      runner: r.runner,
      duration_ms: r.durationMs,
      stdout_bytes: r.stdoutBytes,
      stderr_bytes: r.stderrBytes,
      limits: r.limits.map((l) => ({ limit: l.limit, detail: l.detail })),
      changes: r.changes.map((c) => ({ path: c.path, seq: c.seq })),
      total_lines: lines.length,
    };
    const all = numbered(lines, 1);
    if (fitting(all, room) === all.length) {
      const text = lines.length === 0 ? `${head}\n(no output)` : `${head}\n${all.join('\n')}`;
      return { text, isError: false, data: { ...data, shown_lines: lines.length === 0 ? [] : [{ start_line: 1, end_line: lines.length }] } };
    }
    // Over the budget: keep it all, show the first and the last lines, name the call for the rest.
    const id = (await commands()).keepOutput(session.statePath, `${lines.join('\n')}\n`);
    const h = Math.max(1, fitting(all, Math.floor(room * 0.5)));
    const tail = all.slice(h);
    const t = fitting([...tail].reverse(), Math.floor(room * 0.45));
    const hiddenFrom = h + 1;
    const hiddenTo = lines.length - t;
    const next = toolCallText('read_command_output', { id, start_line: hiddenFrom, end_line: hiddenTo });
    const text = [
      head,
      `output: ${lines.length.toLocaleString('en-US')} lines, over this call's budget; kept as output ${id}. Lines 1-${h} and ${hiddenTo + 1}-${lines.length} shown:`,
      ...all.slice(0, h),
      `[… lines ${hiddenFrom}-${hiddenTo} not shown: ${next} …]`,
      ...all.slice(hiddenTo),
    ].join('\n');
    return {
      text,
      isError: false,
      data: {
        ...data,
        output_id: id,
        shown_lines: [{ start_line: 1, end_line: h }, ...(t > 0 ? [{ start_line: hiddenTo + 1, end_line: lines.length }] : [])],
        next,
      },
    };
  },
});

export const readCommandOutput = defineTool({
  name: 'read_command_output',
  title: 'Read kept command output',
  description:
    'Reads lines start_line..end_line (numbered) of a command output that run_command kept because it was over the budget; as many as the budget holds, with the call for the rest.',
  input: () =>
    z.object({
      id: z
        .string()
        .regex(/^[0-9a-f]{12}$/)
        .describe('The output id run_command gave.'),
      start_line: z.number().int().min(1),
      end_line: z.number().int().min(1).optional().describe('Default: as far as the budget holds.'),
      max_tokens: z.number().int().min(1).optional(),
    }),
  output: () =>
    z.object({ id: z.string(), start_line: z.number().int(), end_line: z.number().int(), total_lines: z.number().int(), next: z.string().optional() }),
  annotations: READ_ONLY,
  approval: 'never',
  api: { op: 'readCommandOutput', args: ['id', 'start_line', 'end_line'] },
  examples: [{ id: '3f9a0c1be2d4', start_line: 201, end_line: 400 }],
  async run(session, a) {
    const page = (await commands()).readOutputLines(session.statePath, a.id, a.start_line, a.end_line ?? Number.MAX_SAFE_INTEGER);
    const budget = Math.max(64, callBudget(session, a.max_tokens) - FRAME_TOKENS);
    const all = numbered(page.lines, page.start);
    const n = Math.max(page.lines.length === 0 ? 0 : 1, fitting(all, budget));
    const shownEnd = page.start + n - 1;
    const wanted = Math.min(page.total, a.end_line ?? page.total);
    const next = shownEnd < wanted ? toolCallText('read_command_output', { id: a.id, start_line: shownEnd + 1, end_line: wanted }) : undefined;
    const head = `output ${a.id}: lines ${page.start}-${shownEnd} of ${page.total}`;
    const text = [head, ...all.slice(0, n), ...(next ? [`[… lines ${shownEnd + 1}-${wanted} not shown: ${next} …]`] : [])].join('\n');
    return { text, isError: false, data: { id: a.id, start_line: page.start, end_line: shownEnd, total_lines: page.total, next } };
  },
});
