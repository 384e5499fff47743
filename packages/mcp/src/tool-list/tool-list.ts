/**
 * The MCP tool list — name, description, input and output schemas,
 * annotations — generated from the tool definitions. A copy is committed as
 * JSON (`tools.json`, written by `pnpm gen:docs`, held equal to this by a
 * test) so that `tools/list` is answered from it at start-up, before the
 * tool set and the context layer under it have loaded.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import type { AnyToolDefinition } from '@ctxfs/tools';

/** One entry of `tools/list`. */
export interface McpToolEntry {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: { type: 'object'; [key: string]: unknown };
  /** With an `$id` naming its shape: tools of one result shape share it. */
  readonly outputSchema: { $id: string; type: 'object'; [key: string]: unknown };
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
 * `schema` with an `$id` made from its content. Ten edit tools share one
 * result shape, and a client compiles a validator per output schema when it
 * lists the tools (the official SDK's client took 163 ms for our 34 at
 * start-up); with an `$id` it compiles each shape once and finds it by id
 * after. Made from the content, the id changes whenever the shape does, so
 * a client never validates against an older shape of the same name.
 */
function identified(schema: Record<string, unknown>): Record<string, unknown> {
  const { $id: _, ...rest } = schema;
  const digest = createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 16);
  return { $id: `urn:ctxfs:result-schema:${digest}`, ...rest };
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
    outputSchema: identified(outputJsonSchema(t)) as McpToolEntry['outputSchema'],
    annotations: { title: t.title, ...t.annotations },
    _meta: { 'ctxfs/approval': t.approval },
  }));
}
