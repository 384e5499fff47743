/**
 * The MCP tool list — name, description, input and output schemas,
 * annotations — generated from the tool definitions. A copy is committed as
 * JSON (`tools.json`, written by `pnpm gen:docs`, held equal to this by a
 * test) so that `tools/list` is answered from it at start-up, before the
 * tool set and the context layer under it have loaded.
 *
 * @module
 */

import type { AnyToolDefinition } from '@ctxfs/tools';

/** One entry of `tools/list`. */
export interface McpToolEntry {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: { type: 'object'; [key: string]: unknown };
  readonly outputSchema: { type: 'object'; [key: string]: unknown };
  readonly annotations: {
    readonly title: string;
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
  readonly _meta: { readonly 'ctxfs/approval': 'policy' | 'never' };
}

/**
 * The `tools/list` entries of `tools`.
 *
 * @example
 * ```ts
 * const { TOOLS } = await import('@ctxfs/tools');
 * (await toolList(TOOLS))[0]?.name; // 'project_overview'
 * ```
 */
export async function toolList(tools: readonly AnyToolDefinition[]): Promise<McpToolEntry[]> {
  const { inputJsonSchema, outputJsonSchema } = await import('@ctxfs/tools');
  return tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputJsonSchema(t) as McpToolEntry['inputSchema'],
    outputSchema: outputJsonSchema(t) as McpToolEntry['outputSchema'],
    annotations: { title: t.title, ...t.annotations },
    _meta: { 'ctxfs/approval': t.approval },
  }));
}
