/**
 * How a text names a call, an operation or an option: as the caller's
 * surface writes them (the API's `readLines("a.ts", 10, 20)`, the tools'
 * `read_file` with `max_tokens`), so every hint and `next` call a model is
 * given works where the model is. Light on purpose: the guard's refusals
 * name operations too, and a raw read must not load the search.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';

/** A value of a call's argument or option. */
export type CallValue = string | number | boolean | { readonly [key: string]: CallValue | undefined } | undefined;

function valueText(value: CallValue): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === undefined) return 'undefined';
  return optionsText(value);
}

function optionsText(options: { readonly [key: string]: CallValue | undefined }): string {
  const parts = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${valueText(v)}`);
  return `{${parts.join(', ')}}`;
}

/** A call's options, by the API's names; `undefined` ones are left out. */
export type CallOptions = { readonly [key: string]: CallValue | undefined };

/**
 * How suggested calls are written: the surface a model calls through (the
 * TypeScript API, or a tool set with its own names and argument shapes)
 * writes them its own way, so a hint names a call that works where the model
 * is. `format` gets the API's operation, positional arguments and options.
 */
export interface CallStyle {
  readonly name: string;
  format(op: string, args: readonly CallValue[], options: CallOptions): string;
  /**
   * An option of `op` as this style names it (`max_tokens` for `maxTokens`),
   * or `undefined` when the surface gives `op` no such option, so that a
   * text offers none. Without it, the API's own name.
   */
  optionName?(op: string, key: string): string | undefined;
  /** An operation's name as this style's caller knows it (`list_files` for `listFiles`). Without it, the API's. */
  operationName?(op: string): string;
  /**
   * Words this style writes in its calls that name a place on purpose, kept
   * as written when host paths are taken out of an error
   * (`withoutHostPaths`): the command line a person typed, which a hint
   * repeats (`ctxfs --workdir /srv`) and which tells them nothing they did
   * not say. A model's surface keeps none.
   */
  readonly verbatim?: readonly string[];
}

/** The API's own style: `readLines("a.ts", 10, 20)`. */
export const API_CALL_STYLE: CallStyle = {
  name: 'api',
  format(op, args, options) {
    const parts = args.map(valueText);
    if (Object.values(options).some((v) => v !== undefined)) parts.push(optionsText(options));
    return `${op}(${parts.join(', ')})`;
  },
};

// One style per async call chain: a session serving the MCP server and one
// serving a script can run in the same process at once.
const activeStyle = new AsyncLocalStorage<CallStyle>();

/**
 * An operation's name as the active style's caller knows it, for a text
 * that names it.
 *
 * @example
 * ```ts
 * operationName('listFiles'); // 'listFiles'; in the tools' style 'list_files'
 * ```
 */
export function operationName(op: string): string {
  return activeStyle.getStore()?.operationName?.(op) ?? op;
}

/**
 * An option of `op` as the active style names it, for a text that tells a
 * caller to change it; `undefined` when the caller's surface has no such
 * option for `op`.
 *
 * @example
 * ```ts
 * optionName('readFile', 'maxTokens'); // 'maxTokens'; in the tools' style 'max_tokens'; for grep, whose tool has no budget, undefined
 * ```
 */
export function optionName(op: string, key: string): string | undefined {
  const style = activeStyle.getStore() ?? API_CALL_STYLE;
  return style.optionName === undefined ? key : style.optionName(op, key);
}

/**
 * The words the active style keeps verbatim ({@link CallStyle.verbatim}),
 * none outside {@link withCallStyle}.
 *
 * @example
 * ```ts
 * withCallStyle(cliStyle, () => verbatimWords()); // ['ctxfs --workdir /srv']
 * ```
 */
export function verbatimWords(): readonly string[] {
  return activeStyle.getStore()?.verbatim ?? [];
}

/**
 * Runs `body` with suggested calls written in `style` (the tools package
 * runs every tool call in its style).
 *
 * @example
 * ```ts
 * const r = await withCallStyle(myStyle, () => ctx.readFile('big.ts'));
 * r.next; // written by myStyle.format('readLines', ['big.ts', 1, 120], {})
 * ```
 */
export function withCallStyle<T>(style: CallStyle, body: () => T): T {
  return activeStyle.run(style, body);
}

/**
 * Whether the caller is a program on the TypeScript API (no
 * {@link withCallStyle} around the call): advice only a program can take
 * (the protocol's streaming calls) is for it alone.
 *
 * @example
 * ```ts
 * const tail = callsApi() ? ' A program can rewrite it with fs.openWrite.' : '';
 * ```
 */
export function callsApi(): boolean {
  return (activeStyle.getStore() ?? API_CALL_STYLE) === API_CALL_STYLE;
}

/**
 * A call as a model writes it, in the active style (the API's outside
 * {@link withCallStyle}); options left `undefined` are dropped, and so is an
 * empty options object.
 *
 * @example
 * ```ts
 * callText('grep', ['retries'], { path: 'src', literal: true, glob: undefined }); // 'grep("retries", {path: "src", literal: true})'
 * ```
 */
export function callText(op: string, args: readonly CallValue[], options: CallOptions = {}): string {
  return (activeStyle.getStore() ?? API_CALL_STYLE).format(op, args, options);
}

/**
 * A call whose arguments the model chooses (a grep's pattern, a file's new
 * content), named with the options already known, for a sentence that says
 * what to add: `search it for your pattern with ${callShape('grep', { path })}`.
 * The active style's `format` gets the options and no arguments. The API's
 * own style writes the name, and the options after `with`
 * (`grep with {path: "a.ts"}`, `writeFile`): `grep({path: "a.ts"})` would
 * read as a whole call to copy, and fail.
 *
 * @example
 * ```ts
 * callShape('grep', { path: 'big.log' }); // 'grep with {path: "big.log"}'
 * callShape('writeFile'); // 'writeFile'
 * ```
 */
export function callShape(op: string, options: CallOptions = {}): string {
  const style = activeStyle.getStore() ?? API_CALL_STYLE;
  if (style !== API_CALL_STYLE) return style.format(op, [], options);
  return Object.values(options).some((v) => v !== undefined) ? `${op} with ${optionsText(options)}` : op;
}
