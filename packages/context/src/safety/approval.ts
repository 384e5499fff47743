/**
 * Approvals: when the policy says "ask", a person decides. An `Approver` is
 * asked with what the operation would do — each file's diff for a change,
 * what would be served for a read — and silence past the timeout is a
 * denial. Every decision says who made it: `user`, `denied_by_user`,
 * `timeout`, or `error` when the approver failed before anyone answered (the
 * policy's own `policy` and `auto` decisions need no one).
 *
 * Three approvers: a function (`callbackApprover`, for programs and tests),
 * the terminal (`TerminalApprover`: a TTY only, never a pipe), and whatever
 * a surface binds (the MCP server's elicitation).
 *
 * @module
 */

import type { OpClass } from './policy.ts';

/** One file a change would make. */
export interface ChangePreview {
  readonly path: string;
  /** Unified diff of the change; `''` when none can be shown (binary). */
  readonly diff: string;
  readonly added: number;
  readonly removed: number;
}

/** What a person is asked about. */
export interface ApprovalRequest {
  readonly op: string;
  readonly opClass: OpClass;
  readonly agent: string;
  readonly sessionId: string;
  readonly paths: readonly string[];
  /** Why the policy asks. */
  readonly reason: string;
  /** For a change: every file's diff (a multi-file patch shows them all). */
  readonly changes?: readonly ChangePreview[] | undefined;
  /** For a read or search: what would be served, in a line or two. */
  readonly summary?: string | undefined;
}

/** A person's answer. */
export interface ApprovalAnswer {
  readonly approved: boolean;
  /** Who answered (a user name, a client id); recorded in the audit. */
  readonly approver?: string | undefined;
  /** Said to the model when denied. */
  readonly note?: string | undefined;
  /**
   * No person was asked (the approver had no one to ask, e.g. a client that
   * cannot show a question): the denial is the policy's, not a person's.
   */
  readonly unasked?: boolean | undefined;
}

/** Asks a person. Implementations must give up when `signal` aborts (the timeout). */
export interface Approver {
  readonly name: string;
  approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/**
 * How a decision was made, as the audit records it. `error`: the approver
 * failed (threw) before anyone answered — a denial no person made.
 */
export type DecidedBy = 'policy' | 'auto' | 'user' | 'denied_by_user' | 'timeout' | 'error';

/** A decision with its record. */
export interface ApprovalOutcome {
  readonly approved: boolean;
  readonly by: DecidedBy;
  /** ISO time of the decision. */
  readonly at: string;
  readonly approver?: string | undefined;
  readonly note?: string | undefined;
}

/**
 * An approver from a function.
 *
 * @example
 * ```ts
 * const approver = callbackApprover((req) => ({ approved: req.paths.every((p) => p.startsWith('src/')), approver: 'ci' }));
 * ```
 */
export function callbackApprover(fn: (request: ApprovalRequest, signal: AbortSignal) => ApprovalAnswer | Promise<ApprovalAnswer>, name = 'callback'): Approver {
  return { name, approve: async (request, signal) => await fn(request, signal) };
}

/**
 * The longest wait a timer can make: Node runs a longer delay (or an
 * infinite one) after 1 ms, which would deny every question at once.
 */
export const MAX_APPROVAL_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Asks `approver`, denying on timeout, on an abort and when there is no
 * approver (nobody to ask is a denial, never a silent approval). A timeout
 * beyond {@link MAX_APPROVAL_TIMEOUT_MS} (about 24.8 days, `Infinity`
 * included) waits that long; one that is not a number waits not at all.
 */
export async function askApproval(approver: Approver | undefined, request: ApprovalRequest, timeoutMs: number): Promise<ApprovalOutcome> {
  const at = () => new Date().toISOString();
  if (approver === undefined) {
    return { approved: false, by: 'policy', at: at(), note: 'approval is required and no approver is configured' };
  }
  const waitMs = Number.isNaN(timeoutMs) ? 0 : Math.min(Math.max(timeoutMs, 0), MAX_APPROVAL_TIMEOUT_MS);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error('approval timed out'));
      resolve('timeout');
    }, waitMs);
  });
  try {
    const answer = await Promise.race([approver.approve(request, controller.signal), timeout]);
    if (answer === 'timeout')
      return { approved: false, by: 'timeout', at: at(), approver: approver.name, note: `no answer within ${Math.round(waitMs / 1000)} s` };
    return {
      approved: answer.approved,
      by: answer.approved ? 'user' : answer.unasked ? 'policy' : 'denied_by_user',
      at: at(),
      approver: answer.approver ?? approver.name,
      note: answer.note,
    };
  } catch (err) {
    if (controller.signal.aborted) return { approved: false, by: 'timeout', at: at(), approver: approver.name, note: (err as Error).message };
    // An approver that fails has not approved, and no person declined.
    return { approved: false, by: 'error', at: at(), approver: approver.name, note: `the approver failed before anyone answered: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

/** Diff lines shown per file in a terminal prompt (a screenful). */
const PROMPT_DIFF_LINES = 80;
/** Characters of paths a request's first line names; the rest are counted. */
const HEAD_PATH_CHARS = 200;
/** Room kept for each file's note of what its diff left out. */
const NOTE_CHARS = 48;
/** Room kept for the notice that not all of the change is shown. */
const NOTICE_CHARS = 240;
/** A line cut to its file's share shows at least this much of itself; less is left out whole. */
const MIN_CUT_LINE = 40;
/** Columns between tab stops, for tabs shown as spaces. */
const TAB_WIDTH = 4;

/**
 * Code points a terminal acts on instead of showing: C0 and C1 controls
 * (ESC starts every ANSI sequence, CR returns to the start of the line), DEL,
 * bidirectional marks and overrides (which reorder what is on screen), line
 * and paragraph separators, and lone surrogates.
 */
function acts(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    (code >= 0xd800 && code <= 0xdfff)
  );
}

function escapeOf(code: number): string {
  if (code === 0x0a) return '\\n';
  if (code === 0x0d) return '\\r';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` as a person is shown it: what a terminal would act on is written
 * out (`\x1b`, `\r`, `\u202e`), so content or a name cannot move the
 * cursor, erase, recolour or reorder what the person reads before answering;
 * tabs become spaces.
 */
function visibleText(text: string): string {
  let out = '';
  let column = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (code === 0x09) {
      const n = TAB_WIDTH - (column % TAB_WIDTH);
      out += ' '.repeat(n);
      column += n;
    } else if (acts(code)) {
      const e = escapeOf(code);
      out += e;
      column += e.length;
    } else {
      out += ch;
      column++;
    }
  }
  return out;
}

/** The paths of the first line, up to {@link HEAD_PATH_CHARS}; each file is listed below it anyway. */
function namedPaths(paths: readonly string[]): string {
  let out = '';
  let n = 0;
  for (const p of paths) {
    const v = visibleText(p);
    if (n > 0 && out.length + v.length + 2 > HEAD_PATH_CHARS) break;
    out += n === 0 ? v : `, ${v}`;
    n++;
  }
  return n < paths.length ? `${out} and ${paths.length - n} more` : out;
}

/** Limits of {@link describeRequest}. */
export interface DescribeLimits {
  /** Diff lines shown per file; default 80 (a terminal's screenful). */
  readonly diffLines?: number;
  /**
   * Characters the whole description may take (an MCP elicitation's
   * message). Every file's header is shown and each diff gets its share,
   * cut with a note of the lines left out; what cannot be shown at all is
   * said before the files.
   */
  readonly chars?: number;
}

interface FileShown {
  readonly header: string;
  lines: string[];
  /** Diff lines left out. */
  omitted: number;
}

const sizeOf = (lines: readonly string[]): number => lines.reduce((n, l) => n + l.length + 1, 0);

/** `room` shared so that no file gets less than another unless it needs less (a small diff is shown whole). */
function shares(needs: readonly number[], room: number): number[] {
  const out = needs.map(() => 0);
  const order = needs.map((_, i) => i).sort((a, b) => (needs[a] as number) - (needs[b] as number));
  let left = room;
  for (const [k, i] of order.entries()) {
    const give = Math.min(needs[i] as number, Math.floor(left / (order.length - k)));
    out[i] = give;
    left -= give;
  }
  return out;
}

/** Cuts `file`'s diff to `share` characters; whether anything was cut. */
function cutToShare(file: FileShown, share: number): boolean {
  const kept: string[] = [];
  let used = 0;
  for (const line of file.lines) {
    if (used + line.length + 1 > share) break;
    kept.push(line);
    used += line.length + 1;
  }
  const next = file.lines[kept.length];
  if (next === undefined) return false;
  let omitted = file.lines.length - kept.length;
  const rest = share - used - 1;
  if (rest >= MIN_CUT_LINE) {
    // A long line (minified code) would otherwise hide the whole diff after it.
    const chars = [...next];
    const suffix = (n: number): string => ` … [${chars.length - n} more characters]`;
    const n = Math.max(0, rest - suffix(0).length);
    kept.push(`${chars.slice(0, n).join('')}${suffix(n)}`);
    omitted--;
  }
  file.lines = kept;
  file.omitted += omitted;
  return true;
}

/**
 * Fits the files into `budget` characters besides `head`: every header
 * first, then the diffs in shares. Returns the files shown and what to say
 * before them when not all of the change fits.
 */
function fitToChars(head: readonly string[], files: FileShown[], budget: number): { files: FileShown[]; notice: string | undefined } {
  let room = budget - sizeOf(head) - NOTICE_CHARS;
  let kept = 0;
  for (const f of files) {
    const cost = f.header.length + 1 + NOTE_CHARS;
    if (cost > room) break;
    room -= cost;
    kept++;
  }
  const shown = files.slice(0, kept);
  const given = shares(
    shown.map((f) => sizeOf(f.lines)),
    Math.max(room, 0),
  );
  let cut = false;
  for (const [i, f] of shown.entries()) if (cutToShare(f, given[i] as number)) cut = true;
  const limit = `this question holds ${budget.toLocaleString('en-US')} characters`;
  if (kept < files.length) {
    return {
      files: shown,
      notice: `  NOT ALL OF THIS CHANGE IS SHOWN: ${files.length - kept} of its ${files.length} files are left out, name and diff (${limit}); approve only a change you have seen in full elsewhere`,
    };
  }
  return {
    files: shown,
    notice: cut ? `  Not all of this change is shown: each file's diff is cut to its share (${limit}); the lines left out are counted below` : undefined,
  };
}

/**
 * What a person is shown before the question: who asks, why, and each
 * file's diff, with every control character and escape sequence written out
 * so that nothing in a file or a name can change what is on screen.
 */
export function describeRequest(request: ApprovalRequest, limits: DescribeLimits = {}): string {
  const maxLines = limits.diffLines ?? PROMPT_DIFF_LINES;
  const head = [
    `ctxfs: ${visibleText(request.agent)} asks to ${visibleText(request.op)} ${namedPaths(request.paths)}`,
    `  why asked: ${visibleText(request.reason)}`,
  ];
  // A command line of several lines stays readable, its later lines set in under the first.
  if (request.summary) head.push(...request.summary.split('\n').map((l, i) => `${i === 0 ? '  ' : '    '}${visibleText(l)}`));
  let files = (request.changes ?? []).map((c): FileShown => {
    const all = c.diff === '' ? [] : c.diff.replace(/\n$/, '').split('\n');
    const lines = all.slice(0, maxLines).map((l) => `    ${visibleText(l)}`);
    return { header: `  ${visibleText(c.path)}: +${c.added} -${c.removed}`, lines, omitted: all.length - lines.length };
  });
  let notice: string | undefined;
  if (limits.chars !== undefined) ({ files, notice } = fitToChars(head, files, limits.chars));
  const out = [...head];
  if (notice !== undefined) out.push(notice);
  for (const f of files) {
    out.push(f.header, ...f.lines);
    if (f.omitted > 0) out.push(`    … ${f.omitted} more diff lines not shown`);
  }
  const text = out.join('\n');
  if (limits.chars === undefined || text.length <= limits.chars) return text;
  // Only a head longer than the budget (a very long reason or summary) gets here.
  const cutNotice = `NOT ALL OF THIS REQUEST IS SHOWN: it is cut at ${limits.chars.toLocaleString('en-US')} characters; approve only a change you have seen in full elsewhere\n`;
  return `${cutNotice}${[...text].slice(0, Math.max(0, limits.chars - cutNotice.length)).join('')}`;
}

/**
 * Asks at the terminal: shows the request (the diffs of a change) and waits
 * for y or n. Only on a terminal: when input is not a TTY (a pipe, CI, an
 * MCP server's stdio) it denies at once rather than read an answer from
 * data that is not a person.
 *
 * @example
 * ```ts
 * const ctx = await createContext({ fs, safety: { approver: new TerminalApprover() } });
 * ```
 */
export class TerminalApprover implements Approver {
  readonly name = 'terminal';
  readonly #input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly #output: NodeJS.WritableStream;

  constructor(options: { input?: NodeJS.ReadableStream & { isTTY?: boolean }; output?: NodeJS.WritableStream } = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stderr;
  }

  async approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (this.#input.isTTY !== true) return { approved: false, note: 'approval needs a person at a terminal, and input is not a terminal' };
    this.#output.write(`${describeRequest(request)}\n`);
    const rl = process.getBuiltinModule('node:readline/promises').createInterface({ input: this.#input, output: this.#output, terminal: true });
    try {
      const answer = await rl.question('Approve? [y/N] ', { signal });
      return { approved: /^\s*y(es)?\s*$/i.test(answer), approver: process.env.USER ?? 'terminal' };
    } finally {
      rl.close();
    }
  }
}
