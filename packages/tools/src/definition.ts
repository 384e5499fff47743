/**
 * What one tool is: the single definition every surface (the TypeScript
 * dispatcher, the MCP server, the CLI, the SDK shapes, the docs) is generated
 * from. A definition names the session call it runs, so the hints a result
 * carries can be written as calls of the same tool set.
 *
 * @module
 */

import type { ContextSession } from '@ctxfs/context';
import type { z } from 'zod';

/** MCP tool annotations; every ctxfs tool works on a closed workspace, so `openWorldHint` is always false. */
export interface ToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: false;
}

/** How a tool's result reaches a model and a program. */
export interface ToolResult<Data = Record<string, unknown>> {
  /** What the model reads. */
  readonly text: string;
  /** The same result as data, matching the tool's output schema. */
  readonly data: Data;
  /** A refusal or failure: `text` says why and what to do. */
  readonly isError: boolean;
}

/** What a tool's `run` may use besides the session. */
export interface ToolRunContext {
  /** Aborted when the caller cancels the call. */
  readonly signal?: AbortSignal | undefined;
  /** The tools offered alongside (the overview lists them). */
  readonly tools: readonly AnyToolDefinition[];
}

/**
 * One tool.
 *
 * @example
 * ```ts
 * const readLinesTool = defineTool({
 *   name: 'read_lines',
 *   title: 'Read lines',
 *   description: 'Numbered lines start_line..end_line of a file …',
 *   input: () => z.object({ path: z.string(), start_line: z.number().int(), end_line: z.number().int().optional() }),
 *   output: () => servedData,
 *   annotations: READ_ONLY,
 *   approval: 'never',
 *   api: { op: 'readLines', args: ['path', 'start_line', 'end_line'] },
 *   examples: [{ path: 'src/a.ts', start_line: 10, end_line: 40 }],
 *   run: async (session, a) => servedResult(await session.readLines(a.path, a.start_line, a.end_line)),
 * });
 * ```
 */
export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodObject = z.ZodObject> {
  /** snake_case, as models call it. */
  readonly name: string;
  readonly title: string;
  /** Written for models: when to use it, what it returns, what to do when it refuses. */
  readonly description: string;
  /** The arguments; the published JSON Schema is generated from it. */
  readonly input: Input;
  /** The shape of `ToolResult.data`. */
  readonly output: Output;
  readonly annotations: ToolAnnotations;
  /** `policy`: the workspace policy may ask a person before it runs (a change); `never`: reads. */
  readonly approval: 'policy' | 'never';
  /**
   * The session call this tool runs, and which of its arguments are that
   * call's positional arguments in order (the rest are its options, by the
   * same names in camelCase). Hints name API calls; the tool call style maps
   * them back through this.
   */
  readonly api: { readonly op: string; readonly args: readonly string[] };
  /** Valid arguments, shown in docs and checked against the schema by the tests. */
  readonly examples: readonly z.input<Input>[];
  run(session: ContextSession, input: z.output<Input>, context: ToolRunContext): Promise<ToolResult<z.output<Output>>>;
}

/** A definition whose input and output types are erased, as lists hold them. */
// biome-ignore lint/suspicious/noExplicitAny: a list of definitions of different argument types; each is checked where it is written.
export type AnyToolDefinition = ToolDefinition<any, any>;

/**
 * A tool as it is written: a definition whose schemas may be given as
 * functions that build them. The catalog writes them so: a process that
 * runs one tool (a CLI command) builds that tool's input schema only, where
 * building every tool's input and output schemas at import took about
 * 20 ms of each command's start.
 */
export interface ToolSpec<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodObject = z.ZodObject>
  extends Omit<ToolDefinition<Input, Output>, 'input' | 'output'> {
  /** The arguments' schema, or a function that builds it (called once, when first asked for). */
  readonly input: Input | (() => Input);
  /** The result data's schema, or a function that builds it (called once, when first asked for). */
  readonly output: Output | (() => Output);
}

/**
 * `build`'s value, made when first asked for and the same object after: a
 * schema shared by several tools' schemas, built only when one of them is.
 *
 * @example
 * ```ts
 * const path = once(() => z.string().min(1));
 * const readFile = defineTool({ …, input: () => z.object({ path: path() }) });
 * ```
 */
export function once<T>(build: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = build();
      made = true;
    }
    return value;
  };
}

/**
 * Checks a definition's types where it is written, and returns it with
 * `input` and `output` as properties: a schema given as a function is built
 * when first read, once, and every surface reads it as a schema.
 */
export function defineTool<Input extends z.ZodObject, Output extends z.ZodObject>(spec: ToolSpec<Input, Output>): ToolDefinition<Input, Output> {
  const { input, output } = spec;
  // Redefined in place: the properties keep their order, and stay enumerable (a spread copies the schemas).
  return Object.defineProperties(
    { ...spec },
    {
      input: { get: typeof input === 'function' ? once(input) : () => input, enumerable: true, configurable: true },
      output: { get: typeof output === 'function' ? once(output) : () => output, enumerable: true, configurable: true },
    },
  ) as ToolDefinition<Input, Output>;
}

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Annotations of a tool that adds or changes content without removing files. */
export const CHANGES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** Annotations of a tool that may remove or replace content wholesale. */
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

/**
 * A tool's call shape for a listing: its name and arguments, optional ones
 * marked with `?` (`read_lines(path, start_line, end_line?, …)`).
 *
 * @example
 * ```ts
 * toolSignature(readLines); // 'read_lines(path, start_line, end_line?, context?, column?, max_tokens?)'
 * ```
 */
export function toolSignature(tool: AnyToolDefinition): string {
  const optional = optionalArguments(tool);
  const args = Object.keys(tool.input.shape).map((key) => `${key}${optional.has(key) ? '?' : ''}`);
  return `${tool.name}(${args.join(', ')})`;
}

const optionalByInput = new WeakMap<object, ReadonlySet<string>>();

/**
 * The arguments of `tool` a call may leave out (their schema accepts
 * `undefined`), worked out once per input schema: every call's argument
 * check and every hint naming a call ask, and a failed zod parse builds an
 * error each time.
 */
export function optionalArguments(tool: AnyToolDefinition): ReadonlySet<string> {
  let optional = optionalByInput.get(tool.input);
  if (optional === undefined) {
    const shape = (tool.input as z.ZodObject).shape as Record<string, z.ZodType>;
    optional = new Set(Object.keys(shape).filter((key) => shape[key]?.safeParse(undefined).success));
    optionalByInput.set(tool.input, optional);
  }
  return optional;
}
