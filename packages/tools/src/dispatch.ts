/**
 * Running tool calls against a session. A call arrives in whatever shape the
 * model's SDK gives it — OpenAI Chat Completions or Responses, Anthropic tool
 * use, the AI SDK, MCP, or a plain `{name, arguments}` — and the reply goes
 * back in the same shape. Failures are results with `isError` and an
 * actionable message, never exceptions: a model can act on a message, not on
 * a stack trace.
 *
 * @module
 */

import { type ContextSession, withCallStyle, withoutHostPaths, withRequestId } from '@ctxfs/context';
import { FsError, type FsErrorCode, hasDefaultHint, isFsError } from '@ctxfs/core';
import { prepareArguments } from './arguments.ts';
import { MODEL_TOOL_CALLS, type ToolCallWriter, toolCallStyle, toolCallText, withToolCallWriter } from './call-style.ts';
import { TOOLS } from './catalog/index.ts';
import type { AnyToolDefinition, ToolResult } from './definition.ts';

/** The SDK shape a call came in. */
export type CallShape = 'openai-chat' | 'openai-responses' | 'anthropic' | 'ai-sdk' | 'plain';

/**
 * A call, whatever its shape, reduced to what running it needs. A call in
 * an SDK's shape always has the id its reply names; a plain call may not.
 */
export type ParsedCall =
  | { readonly id: string; readonly name: string; readonly arguments: unknown; readonly shape: Exclude<CallShape, 'plain'> }
  | { readonly id: string | undefined; readonly name: string; readonly arguments: unknown; readonly shape: 'plain' };

/** A Chat Completions function tool call (an item of `message.tool_calls` whose type is `function`). */
export interface OpenAIChatToolCall {
  readonly id: string;
  readonly type?: 'function' | undefined;
  readonly function: { readonly name: string; readonly arguments: unknown };
}

/** A Responses API function call (an item of `response.output` whose type is `function_call`). */
export interface OpenAIResponsesToolCall {
  readonly type: 'function_call';
  readonly call_id: string;
  readonly name: string;
  readonly arguments: unknown;
}

/** An Anthropic `tool_use` content block. */
export interface AnthropicToolUse {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** An AI SDK tool call (a `toolCalls` item of a step, or a `tool-call` content part). */
export interface AiSdkToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/** A call in no SDK's shape: a name and its arguments (an object or a JSON string), under one of the names used for them. */
export interface PlainToolCall {
  readonly name: string;
  readonly arguments?: unknown;
  readonly input?: unknown;
  readonly args?: unknown;
  readonly id?: string | undefined;
}

/** The reply to a Chat Completions tool call: a `tool` message. */
export interface OpenAIChatToolReply {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** The reply to a Responses API function call: a `function_call_output` input item. */
export interface OpenAIResponsesToolReply {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/** The reply to an Anthropic `tool_use` block: a `tool_result` block for the next user message. */
export interface AnthropicToolReply {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** The reply to an AI SDK tool call: a `tool-result` part for a `tool` message. */
export interface AiSdkToolReply {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: { type: 'text'; value: string } | { type: 'error-text'; value: string };
}

/** The reply to a plain call: the text, whether it failed, and the data. */
export interface PlainToolReply {
  name: string;
  id: string | undefined;
  content: string;
  isError: boolean;
  data: Record<string, unknown>;
}

/** A reply in any shape. */
export type ToolReply = OpenAIChatToolReply | OpenAIResponsesToolReply | AnthropicToolReply | AiSdkToolReply | PlainToolReply;

/** What {@link Toolset.dispatch} returns: the call as read, its result, and the reply in the call's shape. */
export interface Dispatched<Reply extends ToolReply = ToolReply> {
  readonly call: ParsedCall;
  readonly result: CallResult;
  readonly reply: Reply;
}

/** The data of a failed call (arguments refused, an unknown tool, an error of the workspace). */
export interface ErrorData {
  readonly error: { readonly code: string; readonly message: string; readonly path?: string | undefined; readonly hint?: string | undefined };
}

/** What a call returns: the tool's result, or an error result. */
export type CallResult = ToolResult<Record<string, unknown>>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Reads a tool call in any supported shape.
 *
 * @example
 * ```ts
 * parseCall({ id: 'call_1', type: 'function', function: { name: 'read_lines', arguments: '{"path":"a.ts","start_line":1}' } });
 * // { id: 'call_1', name: 'read_lines', arguments: '{"path":"a.ts","start_line":1}', shape: 'openai-chat' }
 * ```
 */
export function parseCall(call: unknown): ParsedCall {
  if (!isObject(call))
    throw new TypeError('A tool call is an object: {name, arguments}, an OpenAI tool call, an Anthropic tool_use block or an AI SDK tool call.');
  const named = (shape: Exclude<CallShape, 'plain'>, name: string, id: string | undefined, args: unknown, idKey: string): ParsedCall => {
    // The reply names the call by this id; without it the model cannot match the two, so the call is refused here.
    if (id === undefined) throw new TypeError(`A tool call in the ${shape} shape carries its ${idKey}; ${name} has none.`);
    return { id, name, arguments: args, shape };
  };
  if (isObject(call.function) && typeof call.function.name === 'string')
    return named('openai-chat', call.function.name, str(call.id), call.function.arguments, 'id');
  if (call.type === 'function_call' && typeof call.name === 'string')
    return named('openai-responses', call.name, str(call.call_id) ?? str(call.id), call.arguments, 'call_id');
  if (call.type === 'tool_use' && typeof call.name === 'string') return named('anthropic', call.name, str(call.id), call.input, 'id');
  if (typeof call.toolName === 'string') return named('ai-sdk', call.toolName, str(call.toolCallId), call.input ?? call.args, 'toolCallId');
  if (typeof call.name === 'string') return { id: str(call.id), name: call.name, arguments: call.arguments ?? call.input ?? call.args, shape: 'plain' };
  throw new TypeError('Not a tool call: expected a name (name, function.name or toolName) and its arguments.');
}

/**
 * An error result: `data.error` holds the code, the message, the path and
 * the hint apart; the model's text is `CODE: message` and the hint (or
 * `extra.text`, when the caller words it itself).
 *
 * @example
 * ```ts
 * errorResult('ENOTOOL', 'There is no tool "read".', { hint: 'The tools: read_file, read_lines.' }).text;
 * // 'ENOTOOL: There is no tool "read".\nThe tools: read_file, read_lines.'
 * ```
 */
export function errorResult(
  code: string,
  message: string,
  extra: { path?: string | undefined; hint?: string | undefined; text?: string | undefined } = {},
): CallResult {
  const data: ErrorData = { error: { code, message, path: extra.path, hint: extra.hint } };
  const head = message.startsWith(`${code}:`) ? message : `${code}: ${message}`;
  const text = extra.text ?? (extra.hint && !head.includes(extra.hint) ? `${head}\n${extra.hint}` : head);
  return { text, isError: true, data: data as unknown as Record<string, unknown> };
}

/** Hints for codes whose protocol default names Filesystem calls, in this tool set's words. */
const TOOL_HINTS: Readonly<Partial<Record<FsErrorCode, string>>> = {
  // Without a path; with one, toolHint names the calls that find it.
  ENOENT: 'check the path with list_files or glob',
  EEXIST: 'the path exists already: choose another name',
  EISDIR: 'the path is a directory: list_files shows its entries; name a file inside it',
  ENOTEMPTY: 'the directory has entries; delete the files in it first',
  EROFS: 'the workspace is read-only here: no change can be made in this session',
  EMFILE: 'the server has too many files open; retry shortly',
  ETOOLARGE: 'read it in ranges with read_lines, or search it with grep and its path',
  EUNSUPPORTED: 'this workspace cannot do that; do the task without this call',
  EBINARY: 'the file is binary: it is not served as text',
  EDECODE: 'the bytes are not text in the file’s encoding: it is not served as text',
  ECLOSED: 'the workspace was closed under the call; reconnect and retry',
  ENOSNAPSHOT: 'no snapshot by that name exists',
  EBADPATTERN: 'fix the pattern, or search for the text as written with the tool’s literal option',
};

/**
 * The hint of a workspace error as the tools give it: one written for the
 * call that failed as it is, and for the protocol's default hint (which
 * names its own calls: `list()`, `openRead()`, `{ recursive: true }`) the
 * same advice in the tools' words.
 */
export function toolHint(err: FsError): string {
  if (!hasDefaultHint(err)) return err.hint;
  // The call that lists the directory, as this surface makes it: a tool call, or on the command line `ctxfs ls build`.
  if (err.code === 'EISDIR' && err.path !== undefined)
    return `the path is a directory: ${toolCallText('list_files', { path: err.path })} shows its entries; name a file inside it`;
  // The calls that find a missing file, as this surface makes them: tool names alone are no command on the command line.
  const name = err.code === 'ENOENT' ? err.path?.split('/').pop() : undefined;
  if (name !== undefined && name !== '')
    return `check the path: ${toolCallText('glob', { pattern: `**/${name}` })} finds it by name; ${toolCallText('list_files', {})} shows the top of the tree`;
  return TOOL_HINTS[err.code] ?? err.hint;
}

/** A workspace error as the tool's error result: named by the tool, with a hint in the tools' words. */
function toolError(tool: string, err: FsError): CallResult {
  const hint = toolHint(err);
  const where = err.path === undefined ? '' : err.dest === undefined ? ` '${err.path}'` : ` '${err.path}' -> '${err.dest}'`;
  // The model reads it all on one line; the data says each part once (`--json`, structured content): the message
  // without the code or the hint, which have fields of their own, as the CLI's own errors are.
  const said = `${err.reason}, ${tool}${where}`;
  return errorResult(err.code, said, { path: err.path, hint, text: `${err.code}: ${said} (${hint})` });
}

/**
 * A failure that is no refusal: a defect of ctxfs or of a library under it
 * (a stack overflow on an input nobody foresaw, a TypeError). The model
 * still gets a result it can act on, never a transport error that its
 * client may show as the server failing; host paths stay out of it, as
 * from a refusal.
 */
function internalError(tool: string, err: unknown): CallResult {
  const said = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const safe = withoutHostPaths(
    new FsError({
      code: 'EIO',
      op: tool,
      reason: `ctxfs failed inside ${tool} (${said.length > 300 ? `${said.slice(0, 300)}…` : said})`,
      hint: 'this is a defect of ctxfs, not of the call; a change may or may not have been made, so look at the file before trying again, or go on without this call',
    }),
  );
  return errorResult('EINTERNAL', safe.reason ?? said, { hint: safe.hint, text: `EINTERNAL: ${safe.reason} (${safe.hint})` });
}

/** The reply to a call, in the shape the call came in. */
export function replyTo(call: ParsedCall, result: CallResult): ToolReply {
  switch (call.shape) {
    case 'openai-chat':
      return { role: 'tool', tool_call_id: call.id, content: result.text };
    case 'openai-responses':
      return { type: 'function_call_output', call_id: call.id, output: result.text };
    case 'anthropic':
      return { type: 'tool_result', tool_use_id: call.id, content: result.text, ...(result.isError ? { is_error: true } : {}) };
    case 'ai-sdk':
      return {
        type: 'tool-result',
        toolCallId: call.id,
        toolName: call.name,
        output: result.isError ? { type: 'error-text', value: result.text } : { type: 'text', value: result.text },
      };
    default:
      return { name: call.name, id: call.id, content: result.text, isError: result.isError, data: result.data };
  }
}

/** Options of one call. */
export interface RunOptions {
  /** Aborts the call: a call not yet started is refused with ECANCELED, a running one sees it in its context. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The caller's key for this call, the same on each of its retries (a UUID
   * made once): a change the call made before is not made again — the retry
   * answers with it, `unchanged` — so a call whose answer was lost (a dropped
   * connection, a timeout) is safe to send again. See `withRequestId` in
   * `@ctxfs/context`. Only a key the caller makes: an SDK's tool-call id is
   * unique only if its provider makes it so.
   */
  readonly requestId?: string | undefined;
}

/** Options of {@link Toolset}. */
export interface ToolsetOptions {
  /** The tools offered; default every tool ({@link TOOLS}). */
  readonly tools?: readonly AnyToolDefinition[];
  /**
   * How the hints in results write a call: a model's tool call by default
   * ({@link MODEL_TOOL_CALLS}); the CLI writes the command a person types.
   */
  readonly writer?: ToolCallWriter;
}

/**
 * The tools bound to one session: list them, run one by name, or dispatch a
 * call in any SDK's shape. Every hint in a result names a call of this tool
 * set.
 *
 * @example
 * ```ts
 * const tools = new Toolset(ctx.session({ agent: 'llm:gpt', profile: 'small' }));
 * const r = await tools.run('grep', { pattern: 'TODO', path: 'src' });
 * r.text;   // matching lines, then e.g. 'read_lines({"path":"src/a.ts","start_line":40,"end_line":60})'
 * const { reply } = await tools.dispatch(openAiToolCall); // { role: 'tool', tool_call_id, content }
 * ```
 */
export class Toolset {
  readonly session: ContextSession;
  readonly tools: readonly AnyToolDefinition[];
  readonly #byName: ReadonlyMap<string, AnyToolDefinition>;
  readonly #style;
  readonly #writer: ToolCallWriter;

  constructor(session: ContextSession, options: ToolsetOptions = {}) {
    this.session = session;
    this.tools = options.tools ?? TOOLS;
    this.#byName = new Map(this.tools.map((t) => [t.name, t]));
    this.#writer = options.writer ?? MODEL_TOOL_CALLS;
    this.#style = toolCallStyle(this.tools, this.#writer);
  }

  /** The definition of `name`, if this set offers it. */
  get(name: string): AnyToolDefinition | undefined {
    return this.#byName.get(name);
  }

  /** Runs tool `name` with a model's arguments (an object or a JSON string). */
  run(name: string, args: unknown, options: RunOptions = {}): Promise<CallResult> {
    return withToolCallWriter(this.#writer, () => this.#run(name, args, options));
  }

  async #run(name: string, args: unknown, options: RunOptions): Promise<CallResult> {
    const tool = this.#byName.get(name);
    if (tool === undefined) {
      return errorResult('ENOTOOL', `There is no tool "${name}".`, { hint: `The tools: ${this.tools.map((t) => t.name).join(', ')}.` });
    }
    const prepared = prepareArguments(tool, args);
    if (!prepared.ok) {
      const missing = prepared.corrected === undefined ? undefined : await withCallStyle(this.#style, () => this.#missing(prepared.corrected?.path));
      // The call offered instead would fail on the path: what is wrong first is that nothing is there.
      return missing === undefined ? errorResult('EINVAL', prepared.message) : toolError(tool.name, withoutHostPaths(missing, this.#style.verbatim));
    }
    if (options.signal?.aborted) return errorResult('ECANCELED', `${name} was cancelled before it ran.`);
    try {
      return await withCallStyle(this.#style, () =>
        withRequestId(options.requestId, () => tool.run(this.session, prepared.value, { signal: options.signal, tools: this.tools })),
      );
    } catch (err) {
      // Whatever a backend or runner said, where a link leads and the host's paths stay out of what a model reads.
      if (isFsError(err)) return toolError(tool.name, withoutHostPaths(err, this.#style.verbatim));
      return internalError(tool.name, err);
    }
  }

  /** The ENOENT of a path that names nothing in the workspace, else undefined (there, not a path, or refused for another reason). */
  async #missing(path: unknown): Promise<FsError | undefined> {
    if (typeof path !== 'string') return undefined;
    try {
      await this.session.listFiles(path, { limit: 1 });
      return undefined;
    } catch (err) {
      return isFsError(err) && err.code === 'ENOENT' ? err : undefined;
    }
  }

  /**
   * Runs a call in any supported shape and gives the reply in the same
   * shape; a call typed as one SDK's gets its reply typed as that SDK's.
   */
  dispatch(call: OpenAIChatToolCall, options?: RunOptions): Promise<Dispatched<OpenAIChatToolReply>>;
  dispatch(call: OpenAIResponsesToolCall, options?: RunOptions): Promise<Dispatched<OpenAIResponsesToolReply>>;
  dispatch(call: AnthropicToolUse, options?: RunOptions): Promise<Dispatched<AnthropicToolReply>>;
  dispatch(call: AiSdkToolCall, options?: RunOptions): Promise<Dispatched<AiSdkToolReply>>;
  dispatch(call: PlainToolCall, options?: RunOptions): Promise<Dispatched<PlainToolReply>>;
  dispatch(call: unknown, options?: RunOptions): Promise<Dispatched>;
  async dispatch(call: unknown, options: RunOptions = {}): Promise<Dispatched> {
    const parsed = parseCall(call);
    const result = await this.run(parsed.name, parsed.arguments, options);
    return { call: parsed, result, reply: replyTo(parsed, result) };
  }
}
